/* What the element's properties ask to match, and loading it into a TemplateBank: decoding,
 * masks, scales and angles. Runs on any thread (the element loads off its streaming thread). */
#pragma once

#include <string>
#include <vector>

#include "template_bank.h"

struct BankRequest {
  enum class Source { None, Location, Rect, List, KeyFile };
  Source source = Source::None;
  std::string location, mask; /* template-location, template-mask */
  std::string list;           /* templates: file names separated by ';' */
  std::string keyfile;        /* template-bank */
  std::vector<double> scales, angles;
  double threshold = 0.8;
  int max_matches = 1;
  bool operator==(const BankRequest &o) const {
    return source == o.source && location == o.location && mask == o.mask && list == o.list && keyfile == o.keyfile &&
           scales == o.scales && angles == o.angles && threshold == o.threshold && max_matches == o.max_matches;
  }
};

/* The label of the template of template-location and template-rect: the roi-type matches had
 * before banks existed. */
extern const char *const kSingleTemplateLabel;

/* Loads a file-based request (not Rect / None). "" on success, else one message naming the file. */
std::string gst_cuda_prep_load_bank(const BankRequest &request, cudaprep::TemplateBank *out);
