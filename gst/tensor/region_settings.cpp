/* The region properties shared by cudatensorize and cudatensorbatch's pads. */
#include "region_settings.h"

#include "property_arrays.h"
#include "tensorize_settings.h"

using namespace cudaprep;

RegionSettings RegionSettings::over(const RegionSettings &d, bool pad_roi) const {
  RegionSettings r = *this;
  auto own = [&](RegionProperty p) { return (set & (1u << p)) != 0; };
  if (!own(REGION_PROP_ROI_META) && !own(REGION_PROP_ROIS) && !pad_roi) r.roi_meta = d.roi_meta;
  if (!own(REGION_PROP_ROI_SOURCE)) r.roi_source = d.roi_source;
  if (!own(REGION_PROP_ROI_TYPE)) r.roi_type = d.roi_type;
  if (!own(REGION_PROP_ROI_MIN_SIZE)) r.roi_min_size = d.roi_min_size;
  if (!own(REGION_PROP_ROI_MAX_SIZE)) r.roi_max_size = d.roi_max_size;
  if (!own(REGION_PROP_ROI_MARGIN)) r.roi_margin = d.roi_margin;
  return r;
}

/* Blurbs: what the property does, then whose frames it reads. */
static const gchar *blurb(RegionScope scope, const char *what, const char *tensorize, const char *pad,
                          const char *element) {
  const char *tail = scope == REGION_SCOPE_TENSORIZE ? tensorize : scope == REGION_SCOPE_BATCH_PAD ? pad : element;
  gchar *text = g_strconcat(what, tail, NULL);
  const gchar *interned = g_intern_string(text); /* param specs keep static strings */
  g_free(text);
  return interned;
}

static const char kElementDefault[] = ". The default of the sink pads that do not set their own";

void gst_cuda_prep_region_properties_install(GObjectClass *klass, guint first_id, unsigned mask, RegionScope scope) {
  const RegionSettings d;
  const GParamFlags rw = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  auto want = [&](RegionProperty p) { return (mask & (1u << p)) != 0; };
  if (want(REGION_PROP_ROIS))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROIS,
        gst_cuda_prep_param_spec_rects(
            "rois", "Regions of interest",
            blurb(scope,
                  "Regions \"<<x, y, width, height>, ...>\" of each frame, one batch slot each (roi is "
                  "then not used). Regions partly outside the frame are clipped to it; regions entirely "
                  "outside or empty are skipped with a warning. ",
                  "More regions than batch-size give several tensors for the same frame; the meta's slots "
                  "say which region each slot came from",
                  "The pads' regions fill the slots in pad order; more regions than batch-size give several "
                  "tensors for the same batch (same timestamps), none dropped; the meta's slots say which pad "
                  "and region each slot came from. Needs a batch-size",
                  ""),
            rw));
  if (want(REGION_PROP_ROI_META))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_META,
        g_param_spec_boolean(
            "roi-meta", "Regions from metas",
            blurb(scope,
                  "Take the regions from each frame's metas (a detector's boxes: GstVideoRegionOfInterestMeta, "
                  "or GstAnalyticsODMtd on GStreamer 1.24+; roi-source says which), one slot each, instead "
                  "of rois / roi; the meta's slots give each one's index and id",
                  "", "; a frame without regions gives no slot. Needs a batch-size",
                  "; a frame without regions gives no slot. Needs a batch-size. The default of the sink pads "
                  "that set none of roi-meta, rois and roi"),
            d.roi_meta, rw));
  if (want(REGION_PROP_ROI_SOURCE))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_SOURCE,
        g_param_spec_enum(
            "roi-source", "Region source",
            blurb(scope,
                  "roi-meta: which metas give the regions. auto: the frame's GstAnalyticsODMtds if it has "
                  "any (rotated boxes as the upright box around them), else its "
                  "GstVideoRegionOfInterestMetas, never both (a detector that writes both describes the "
                  "same objects twice); analytics needs a build with GStreamer's analytics library (1.24+)",
                  "", "", kElementDefault),
            gst_cuda_prep_roi_source_get_type(), d.roi_source, rw));
  if (want(REGION_PROP_ROI_TYPE))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_TYPE,
        g_param_spec_string("roi-type", "Region type",
                            blurb(scope,
                                  "roi-meta: only regions of these classes, comma-separated (e.g. \"car,truck\"): "
                                  "the ROI meta's roi-type, the ODMtd's object type; empty (default) = any",
                                  "", "", kElementDefault),
                            d.roi_type.c_str(), rw));
  if (want(REGION_PROP_ROI_MIN_SIZE))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_MIN_SIZE,
        g_param_spec_int("roi-min-size", "Region minimum size",
                         blurb(scope, "roi-meta: only regions at least this wide and high (before roi-margin)", "", "",
                               kElementDefault),
                         0, kMaxSourceSide, d.roi_min_size, rw));
  if (want(REGION_PROP_ROI_MAX_SIZE))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_MAX_SIZE,
        g_param_spec_int(
            "roi-max-size", "Region maximum size",
            blurb(scope, "roi-meta: only regions at most this wide and high (before roi-margin); 0 = no limit", "", "",
                  kElementDefault),
            0, kMaxSourceSide, d.roi_max_size, rw));
  if (want(REGION_PROP_ROI_MARGIN))
    g_object_class_install_property(
        klass, first_id + REGION_PROP_ROI_MARGIN,
        g_param_spec_double("roi-margin", "Region margin",
                            blurb(scope,
                                  "Fraction of a region's width / height added on each side (rois and roi-meta), "
                                  "rounded outward to whole pixels, then clipped to the frame; e.g. 0.1 grows a "
                                  "100-px box to 120 px",
                                  "", "", kElementDefault),
                            0.0, 10.0, d.roi_margin, rw));
}

gboolean gst_cuda_prep_region_property_set(RegionSettings &s, guint prop, const GValue *value) {
  switch (prop) {
    case REGION_PROP_ROIS: s.rois = gst_cuda_prep_rects_from_array(value); break;
    case REGION_PROP_ROI_META: s.roi_meta = g_value_get_boolean(value); break;
    case REGION_PROP_ROI_SOURCE: s.roi_source = (GstCudaPrepRoiSource)g_value_get_enum(value); break;
    case REGION_PROP_ROI_TYPE: s.roi_type = g_value_get_string(value) ? g_value_get_string(value) : ""; break;
    case REGION_PROP_ROI_MIN_SIZE: s.roi_min_size = g_value_get_int(value); break;
    case REGION_PROP_ROI_MAX_SIZE: s.roi_max_size = g_value_get_int(value); break;
    case REGION_PROP_ROI_MARGIN: s.roi_margin = g_value_get_double(value); break;
    default: return FALSE;
  }
  s.set |= 1u << prop;
  return TRUE;
}

gboolean gst_cuda_prep_region_property_get(const RegionSettings &s, guint prop, GValue *value) {
  switch (prop) {
    case REGION_PROP_ROIS: gst_cuda_prep_rects_to_array(s.rois, value); break;
    case REGION_PROP_ROI_META: g_value_set_boolean(value, s.roi_meta); break;
    case REGION_PROP_ROI_SOURCE: g_value_set_enum(value, (gint)s.roi_source); break;
    case REGION_PROP_ROI_TYPE: g_value_set_string(value, s.roi_type.c_str()); break;
    case REGION_PROP_ROI_MIN_SIZE: g_value_set_int(value, s.roi_min_size); break;
    case REGION_PROP_ROI_MAX_SIZE: g_value_set_int(value, s.roi_max_size); break;
    case REGION_PROP_ROI_MARGIN: g_value_set_double(value, s.roi_margin); break;
    default: return FALSE;
  }
  return TRUE;
}

Status gst_cuda_prep_region_settings_check(const RegionSettings &s, MetaRegionFilter *filter) {
  if (!(s.roi_margin >= 0.0 && s.roi_margin <= 10.0))
    return Status::error("roi-margin " + std::to_string(s.roi_margin) + " is out of range (0..10)");
  if (s.roi_max_size > 0 && s.roi_max_size < s.roi_min_size)
    return Status::error("roi-max-size " + std::to_string(s.roi_max_size) + " is below roi-min-size " +
                         std::to_string(s.roi_min_size));
  if (s.roi_meta && s.roi_source == GST_CUDA_PREP_ROI_SOURCE_ANALYTICS && !gst_cuda_prep_have_analytics_od())
    return Status::error(
        "roi-source=analytics reads GstAnalyticsODMtd, and this build has no GStreamer "
        "analytics library (gstreamer-analytics-1.0 >= 1.24); use roi-source=roi-meta");
  for (size_t i = 0; i < s.rois.size() && !s.roi_meta; i++)
    if (s.rois[i].size() != 4)
      return Status::error("rois item " + std::to_string(i) + " needs 4 values <x, y, width, height>, got " +
                           std::to_string(s.rois[i].size()));
  MetaRegionFilter f;
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_parse_region_classes(s.roi_type, &f.classes));
  f.min_size = s.roi_min_size;
  f.max_size = s.roi_max_size;
  if (filter) *filter = std::move(f);
  return Status();
}

Status gst_cuda_prep_region_plans_init(RegionPlans *p, const TensorOutputSpec &spec, const SlotSourceSpec &source,
                                       const std::string &frame_desc, const RegionSettings &s) {
  static_cast<TensorOutputSpec &>(p->cfg) = spec;
  static_cast<SlotSourceSpec &>(p->cfg) = source;
  p->frame_desc = frame_desc;
  p->clear_regions();
  return gst_cuda_prep_region_settings_check(s, &p->filter);
}

/* Adds region @r grown by @margin of its width / height on each side (outward to whole
 * pixels), then clipped to the frame, as a slot plan; a region entirely outside the frame or
 * empty is listed in p->skipped instead. */
static Status add_region(RegionPlans *p, const Rect &r, double margin, const char *kind, int index, int id) {
  Rect clipped;
  Status st = gst_cuda_prep_clip_rect(gst_cuda_prep_grow_region(r, margin), p->cfg.src_width, p->cfg.src_height,
                                      p->frame_desc, &clipped);
  if (!st.ok()) {
    p->skipped +=
        std::string(p->skipped.empty() ? "" : "; ") + kind + " " + std::to_string(index) + ": " + st.message();
    return Status();
  }
  SlotSourceSpec source = p->cfg;
  source.roi = clipped;
  p->regions.emplace_back();
  p->region_index.push_back(index);
  p->region_id.push_back(id);
  return make_slot_plan(p->cfg, source, &p->regions.back());
}

Status gst_cuda_prep_region_plans_static(RegionPlans *p, const RegionSettings &s) {
  p->clear_regions();
  if (!s.regions()) {
    p->regions.emplace_back();
    p->region_index.push_back(-1);
    p->region_id.push_back(-1);
    return make_slot_plan(p->cfg, p->cfg, &p->regions.back());
  }
  for (size_t i = 0; i < s.rois.size() && !s.roi_meta; i++) {
    const Rect r{s.rois[i][0], s.rois[i][1], s.rois[i][2], s.rois[i][3]};
    CUDAPREP_RETURN_IF_ERROR(add_region(p, r, s.roi_margin, "rois item", (int)i, -1));
  }
  return Status();
}

Status gst_cuda_prep_region_plans_from_metas(RegionPlans *p, const RegionSettings &s, GstBuffer *buffer,
                                             std::vector<MetaRegion> *scratch) {
  p->clear_regions();
  gst_cuda_prep_collect_meta_regions(buffer, s.roi_source, p->filter, scratch);
  for (const MetaRegion &r : *scratch)
    CUDAPREP_RETURN_IF_ERROR(add_region(p, r.box, s.roi_margin, r.kind, r.index, r.id));
  return Status();
}
