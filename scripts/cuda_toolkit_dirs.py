#!/usr/bin/env python3
"""Prints the CUDA toolkit's include and library directories, one per line, as the given
nvcc itself uses them.

Called by kernels/meson.build. Asking nvcc (--dryrun prints its INCLUDES and LIBRARIES) works
wherever the toolkit lives: /usr/local/cuda, a versioned /usr/local/cuda-13.0, a distribution
layout, or behind a wrapper script such as /usr/local/bin/nvcc, where the path of the nvcc
found on PATH says nothing about the toolkit's."""
import os
import shlex
import subprocess
import sys


def from_dryrun(nvcc):
    run = subprocess.run([nvcc, '--dryrun', '-x', 'cu', '-c', os.devnull, '-o', os.devnull],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    includes, libs = [], []
    for line in run.stdout.splitlines():
        if not line.startswith('#$ '):
            continue
        name, _, value = line[3:].partition('=')
        if name.strip() == 'INCLUDES':
            includes += [a[2:] for a in shlex.split(value) if a.startswith('-I')]
        elif name.strip() == 'LIBRARIES':
            libs += [a[2:] for a in shlex.split(value)
                     if a.startswith('-L') and not a.rstrip('/').endswith('stubs')]
    return includes, libs


def main():
    nvcc = sys.argv[1] if len(sys.argv) > 1 else 'nvcc'
    includes, libs = from_dryrun(nvcc)
    if not includes or not libs:
        # Older or unusual nvcc: fall back to the directory above the resolved binary.
        top = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        includes = includes or [os.path.join(top, 'include')]
        libs = libs or [os.path.join(top, 'lib64'), os.path.join(top, 'lib')]
    print(os.path.normpath(includes[0]))
    print(os.pathsep.join(os.path.normpath(d) for d in libs))


if __name__ == '__main__':
    main()
