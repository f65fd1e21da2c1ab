#include "bank_request.h"

#include "template_bank_spec.h"
#include "templatematch.h"

const char *const kSingleTemplateLabel = "template-match";

static std::string split_template_list(const std::string &list, std::vector<std::string> *files) {
  files->clear();
  size_t at = 0;
  for (;;) {
    const size_t end = list.find(';', at);
    const std::string item = list.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (item.empty()) return "templates \"" + list + "\": an empty file name between ';'";
    files->push_back(item);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::string();
}

std::string gst_cuda_prep_load_bank(const BankRequest &r, const cudaprep::MaskedGray *cut,
                                    cudaprep::TemplateBank *out) {
  std::vector<TemplateSpec> specs;
  std::string error;
  switch (r.source) {
    case BankRequest::Source::Location:
    case BankRequest::Source::Rect: {
      TemplateSpec spec;
      spec.label = kSingleTemplateLabel;
      spec.file = r.location;
      spec.mask = r.mask;
      if (r.source == BankRequest::Source::Rect) spec.image = *cut;
      specs.push_back(spec);
      break;
    }
    case BankRequest::Source::List: {
      std::vector<std::string> files;
      error = split_template_list(r.list, &files);
      if (error.empty()) error = gst_cuda_prep_bank_specs_from_files(files, &specs);
      break;
    }
    case BankRequest::Source::KeyFile: error = gst_cuda_prep_parse_bank_file(r.keyfile, &specs); break;
    default: return "no template";
  }
  if (!error.empty()) return error;
  BankDefaults defaults;
  defaults.threshold = r.threshold;
  defaults.max_matches = r.max_matches;
  if (!r.scales.empty()) defaults.scales = r.scales;
  if (!r.angles.empty()) defaults.angles = r.angles;
  return gst_cuda_prep_build_template_bank(specs, defaults, out, &error) ? std::string() : error;
}
