#!/usr/bin/env python3
"""Runs a command under a seccomp filter that refuses one syscall.

    seccomp-exec.py SYSCALL ERRNO -- COMMAND [ARG ...]

SYSCALL is refused with ERRNO (a name from errno, e.g. EPERM), as a
container's seccomp profile refuses what it does not know. Only the
syscalls the fault suite needs, on x86_64 and aarch64. The filter is
installed with no_new_privs, so no privilege is needed, and exec keeps it.
"""

import ctypes
import errno
import os
import platform
import struct
import sys

SYSCALLS = {('x86_64', 'renameat2'): 316, ('aarch64', 'renameat2'): 276}
AUDIT_ARCH = {'x86_64': 0xC000003E, 'aarch64': 0xC00000B7}

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000


def insn(code, k, jt=0, jf=0):
    return struct.pack('HBBI', code, jt, jf, k)


class Fprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_char_p)]


def main(argv):
    name, err, dash, *command = argv
    if dash != '--' or not command:
        sys.exit(__doc__)
    arch = platform.machine()
    nr = SYSCALLS[(arch, name)]
    program = [
        insn(LD_W_ABS, 4),  # seccomp_data.arch
        insn(JEQ_K, AUDIT_ARCH[arch], 1, 0),
        insn(RET_K, RET_ALLOW),
        insn(LD_W_ABS, 0),  # seccomp_data.nr
        insn(JEQ_K, nr, 0, 1),
        insn(RET_K, RET_ERRNO | getattr(errno, err)),
        insn(RET_K, RET_ALLOW),
    ]
    fprog = Fprog(len(program), b''.join(program))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit(f'seccomp: {os.strerror(ctypes.get_errno())}')
    os.execvp(command[0], command)


if __name__ == '__main__':
    main(sys.argv[1:])
