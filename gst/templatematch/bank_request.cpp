#include "bank_request.h"

#include <gst/gst.h>

#include "template_loader.h"
#include "templatematch.h"

const char *const kSingleTemplateLabel = "template-match";

static std::string split_template_list(const std::string &list, std::vector<std::string> *files) {
  files->clear();
  if (list.empty()) return std::string();
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

static std::string load_member(const std::string &path, cudaprep::MaskedGray *out) {
  GrayImage img;
  std::string error = gst_cuda_prep_load_gray_image(path, cudaprep::kMaxTemplateSide, &img);
  if (!error.empty()) return error;
  out->pixels = std::move(img.pixels);
  out->width = img.width;
  out->height = img.height;
  return std::string();
}

static std::string stem_of(const std::string &path) {
  gchar *base = g_path_get_basename(path.c_str());
  std::string s(base);
  g_free(base);
  const size_t dot = s.rfind('.');
  return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

std::string gst_cuda_prep_load_bank(const BankRequest &r, cudaprep::TemplateBank *out) {
  *out = cudaprep::TemplateBank();
  std::vector<std::pair<std::string, std::string>> items; /* label, file */
  if (r.source == BankRequest::Source::Location)
    items.emplace_back(kSingleTemplateLabel, r.location);
  else if (r.source == BankRequest::Source::List) {
    std::vector<std::string> files;
    std::string error = split_template_list(r.list, &files);
    if (!error.empty()) return error;
    for (const std::string &f : files) items.emplace_back(stem_of(f), f);
  } else
    return "template-bank files are not supported yet";
  for (const auto &item : items) {
    cudaprep::BankTemplate t;
    t.label = item.first;
    t.threshold = r.threshold;
    t.max_matches = r.max_matches;
    out->templates.push_back(t);
    cudaprep::BankMember m;
    m.template_index = (int)out->templates.size() - 1;
    std::string error = load_member(item.second, &m.image);
    if (!error.empty()) return error;
    out->members.push_back(std::move(m));
  }
  cudaprep::Status st = cudaprep::check_bank(*out, nullptr);
  return st.ok() ? std::string() : st.message();
}
