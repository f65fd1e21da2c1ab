// cudaprep-regress: what a run reads from the elements of the parsed pipeline: every element,
// their canonical names and settings for the manifest, and where an appsink's data comes from.
#pragma once

#include <gst/gst.h>

#include <map>
#include <string>
#include <vector>

#include "regress_store.h"

namespace regress {

// Every element inside `bin`, recursively, each with a reference the caller drops.
std::vector<GstElement*> elements_of(GstBin* bin);
// `s` with every `from` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to);
// Whether `e` comes from this project's plugin (cudaprep).
bool is_cudaprep(GstElement* e);
// Each element's name as the manifest records it: GStreamer's automatic names ("queue3")
// renumbered by creation order within their prefix ("queue0", "queue1"), others as given.
std::map<GstElement*, std::string> canonical_names(const std::vector<GstElement*>& all);
// The element as the manifest describes it: factory, plugin and writable properties (every one
// for the cudaprep elements, the non-default ones for the others) with the clip path, as given
// or made absolute, written {clip}.
ElementInfo describe_element(GstElement* e, const std::string& name, const std::string& clip,
                             const std::string& abs_clip);
// Whether the caps on the element's "sink" pad are in CUDA memory.
bool sink_pad_has_cuda_memory(GstElement* e);
// Whether an element made by `factory` feeds `e` (through any of its inputs, any distance).
bool upstream_has_factory(GstElement* e, const char* factory);
// Whether an appsink name can name the files of a recording.
bool valid_sink_name(const std::string& n);

}  // namespace regress
