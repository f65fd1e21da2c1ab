#!/usr/bin/env bash
# Runs a command in this repository inside a Debian chroot of another release, as root:
#   bash .ci/chroot.sh NAME COMMAND...      (default COMMAND: a shell)
#   bash .ci/chroot.sh NAME --prepare       (makes or updates the chroot, runs nothing)
#   debian13  Debian 13 "trixie": GStreamer 1.26, GCC 14
#   forky     Debian 14 "forky" (testing): GStreamer 1.28, GCC 16 (and g++-15 for nvcc)
# .ci/debian13.sh and .ci/forky.sh are this script with their NAME.
#
# The chroot is made with debootstrap from the Debian mirror this machine's apt uses and kept in
# $CUDAPREP_CHROOT_CACHE/NAME-chroot (default /var/cache/cudaprep/NAME-chroot), with the build dependencies
# installed by scripts/bootstrap.sh itself. A stamp file next to it records the suite, the mirror
# and the package list; it is written last, so a chroot without it (an interrupted run) or made
# for another suite or mirror is made anew.
# Inside, the repository is /src, /src/build is this checkout's build-NAME/ and /src/build-main
# its build-NAME-main/, so the project's scripts work unchanged and the native builds are left
# alone. The host's CUDA toolkit, where there is one, is mounted read-only at /usr/local/cuda
# (the CUDA path is then built too).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-}
# extra: packages of that release beyond scripts/bootstrap.sh's (forky: nvcc 13.0's newest host
# compiler, .ci/cuda-host/g++).
extra=
case $name in
  debian13) suite=trixie ;;
  forky) suite=forky extra=g++-15 ;;
  *) echo "usage: bash .ci/chroot.sh debian13|forky [COMMAND...]" >&2; exit 2 ;;
esac
shift
root=${CUDAPREP_CHROOT_CACHE:-/var/cache/cudaprep}/$name-chroot
stamp=$root.stamp

if [ "$(id -u)" -ne 0 ]; then
  echo "$name: needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi

# The first URI of an apt source for this machine's own release (one-line or deb822 format).
host_mirror() {
  local codename f
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    if [ -f "$f" ]; then cat "$f"; echo; fi
  done | awk -v want="$codename" '
    function stanza_end() {
      if (!found && types ~ / deb( |$)/ && uri != "" && suites ~ ("(^| )" want "( |$)")) {
        print uri; found = 1
      }
      types = uri = suites = ""
    }
    /^deb[ \t]/ { sub(/\[[^]]*\]/, ""); if (!found && $3 == want) { print $2; found = 1 } }
    /^[ \t]*$/ { stanza_end() }
    /^Types:/ { types = $0 }
    /^URIs:/ { uri = $2 }
    /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
    END { stanza_end() }'
}
mirror=${CUDAPREP_DEBIAN_MIRROR:-$(host_mirror)}
if [ -z "$mirror" ]; then
  echo "$name: found no Debian mirror in /etc/apt/sources.list*; set CUDAPREP_DEBIAN_MIRROR" >&2
  exit 1
fi

mounts=()
unmount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"
  done
  mounts=()
}
trap unmount_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# mount_at TARGET MOUNT-ARGS...: mounts and remembers it for unmount_all.
mount_at() {
  local target=$1; shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}
bind_ro() {
  mount_at "$2" --bind "$1"
  mount -o remount,bind,ro "$2"
}

# One run at a time: a second would mount its checkout over the first's (and unmount it below).
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
# Whatever a killed run left mounted under the chroot must go before anything is deleted in it;
# but mounts that a process living in the chroot uses (someone working in it by hand) are not stale.
for p in /proc/[0-9]*; do
  if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then
    echo "$name: process ${p#/proc/} is using $root; not touching it" >&2
    exit 1
  fi
done
while read -r target; do
  umount -l "$target"
done < <(awk -v r="$root/" 'index($2 "/", r) == 1 { print $2 }' /proc/self/mounts | sort -r)

# A new suite or mirror remakes the chroot; a new package list only installs what is missing.
want_base="suite=$suite mirror=$mirror"
want_stamp="$want_base packages=$(bash "$repo/scripts/bootstrap.sh" --list-packages)${extra:+ $extra}"
have_stamp=$(cat "$stamp" 2>/dev/null || true)
if [ "$have_stamp" != "$want_stamp" ] && [ "${have_stamp%% packages=*}" = "$want_base" ]; then
  packages_changed=1
fi
if [ "${have_stamp%% packages=*}" != "$want_base" ]; then
  echo "$name: making the chroot in $root (debootstrap $suite from $mirror)"
  rm -f "$stamp"
  rm -rf --one-file-system "$root"
  if ! command -v debootstrap >/dev/null; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  fi
  # A debootstrap older than the suite has no script of its name; testing's is unstable's.
  script=/usr/share/debootstrap/scripts/$suite
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  debootstrap --variant=minbase "$suite" "$root" "$mirror" "$script" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; exit 1; }
  # Mirrors that serve snapshots have Release files past their Valid-Until date.
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99cudaprep"
  new_chroot=1
fi

cp /etc/resolv.conf "$root/etc/resolv.conf"
mount_at "$root/proc" -t proc proc
mount_at "$root/dev" --bind /dev
mount_at "$root/dev/pts" --bind /dev/pts  # for apt's and dpkg's terminal log
mkdir -p "$repo/build-$name"
mount_at "$root/src" --bind "$repo"
mount_at "$root/src/build" --bind "$repo/build-$name"
mkdir -p "$repo/build-$name-main"  # pipelines/main.sh's build
mount_at "$root/src/build-main" --bind "$repo/build-$name-main"
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
toolkit=
if [ -n "$nvcc" ]; then  # where the toolkit really is: nvcc may be a wrapper script
  toolkit=$("$nvcc" --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p')
fi
if [ -n "$toolkit" ]; then
  bind_ro "$(realpath "$toolkit")" "$root/usr/local/cuda"
else
  echo "$name: no CUDA toolkit found on this machine: the CPU path only"
fi

in_chroot() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CUDAPREP_MESON_ARGS="${CUDAPREP_MESON_ARGS:-}" "$@"
}
if [ -n "${new_chroot:-}${packages_changed:-}" ]; then
  echo "$name: installing the build dependencies (log: $root.install.log)"
  { in_chroot bash /src/scripts/bootstrap.sh --install-only &&
    if [ -n "$extra" ]; then
      in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $extra
    fi; } >"$root.install.log" 2>&1 || { tail -20 "$root.install.log" >&2; exit 1; }
  echo "$want_stamp" >"$stamp"
fi
if [ "${1:-}" = --prepare ]; then
  exit 0
fi
if [ $# -eq 0 ]; then
  set -- bash
fi
status=0
in_chroot bash -c 'cd /src && exec "$@"' bash "$@" || status=$?
exit $status
