# GStreamer @GST_VERSION@ from the @CHROOT@ chroot (dev/gpu/make-chroot-bundle.sh): source this file, then
# point GST_PLUGIN_PATH at our plugin. Its binaries need glibc >= @GLIBC_NEEDED@.
# - Host glibc as new (the GPU machine: 2.39): they run on it, with LD_LIBRARY_PATH at lib/, as
#   any GStreamer install does.
# - Host glibc older (Debian 12: 2.36): the bundle's own loader and glibc (@GLIBC_VERSION@, in
#   glibc/) run each of them: bin/ holds wrappers (gst-plugin-scanner's too, which GStreamer
#   spawns), and a program built against the bundle (our tests) runs as
#   `gst-bundle-run PROGRAM ARGS`. LD_LIBRARY_PATH stays as it was: host programs cannot run the
#   bundle's libraries on their older glibc.
# gst-bundle-run works the same in both cases. GST_BUNDLE_GLIBC=host or =bundled forces one.
# libcuda.so.1 always comes from the host's driver.
gst_bundle_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # (not B: scripts that source this use it)
gst_bundle_needs=@GLIBC_NEEDED@
gst_bundle_host_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
gst_bundle_glibc=${GST_BUNDLE_GLIBC:-auto}
if [ "$gst_bundle_glibc" = auto ]; then
  gst_bundle_glibc=bundled
  if [ -n "$gst_bundle_host_glibc" ] &&
     [ "$(printf '%s\n' "$gst_bundle_needs" "$gst_bundle_host_glibc" | sort -V | head -1)" = "$gst_bundle_needs" ]; then
    gst_bundle_glibc=host
  fi
fi
case $gst_bundle_glibc in
  host)
    unset GST_BUNDLE_LOADER GST_BUNDLE_LIBRARY_PATH
    export PATH=$gst_bundle_dir/libexec:$gst_bundle_dir/bin:$PATH
    export LD_LIBRARY_PATH=$gst_bundle_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export GST_PLUGIN_SCANNER=$gst_bundle_dir/libexec/gst-plugin-scanner
    echo "gst-bundle: GStreamer @GST_VERSION@ on the host's glibc $gst_bundle_host_glibc (needs $gst_bundle_needs)" >&2 ;;
  bundled)
    export GST_BUNDLE_LOADER=$gst_bundle_dir/glibc/ld-linux-x86-64.so.2
    export GST_BUNDLE_LIBRARY_PATH=$gst_bundle_dir/glibc:$gst_bundle_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PATH=$gst_bundle_dir/bin:$PATH
    export GST_PLUGIN_SCANNER=$gst_bundle_dir/bin/gst-plugin-scanner
    echo "gst-bundle: GStreamer @GST_VERSION@ on its own glibc @GLIBC_VERSION@ (the host's: ${gst_bundle_host_glibc:-unknown}; needs $gst_bundle_needs)" >&2 ;;
  *)
    echo "gst-bundle: GST_BUNDLE_GLIBC must be auto, host or bundled, not '$gst_bundle_glibc'" >&2
    return 1 ;;
esac
export GST_PLUGIN_SYSTEM_PATH=$gst_bundle_dir/plugins
export GST_REGISTRY=${TMPDIR:-/tmp}/gst-@CHROOT@-bundle-registry.bin
# (the host's GIO modules are built for another GLib)
export GIO_MODULE_DIR=$gst_bundle_dir/gio-modules
