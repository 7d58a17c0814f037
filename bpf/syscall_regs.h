/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A syscall's number and arguments in the pt_regs the sys_enter/sys_exit
 * tracepoints pass, per architecture. libbpf 1.1's PT_REGS_PARMn_SYSCALL
 * stops at the fifth argument and has no syscall number, so the table is
 * ours. Direct reads: the tp_btf pointer is trusted BTF.
 */
#ifndef DFTRACE_SYSCALL_REGS_H
#define DFTRACE_SYSCALL_REGS_H

#if defined(__TARGET_ARCH_x86)
#define SC_NR(r) ((r)->orig_ax)
#define SC_ARG0(r) ((r)->di)
#define SC_ARG1(r) ((r)->si)
#define SC_ARG2(r) ((r)->dx)
#define SC_ARG3(r) ((r)->r10)
#define SC_ARG4(r) ((r)->r8)
#define SC_ARG5(r) ((r)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define SC_NR(r) ((r)->syscallno)
#define SC_ARG0(r) ((r)->orig_x0) /* x0 is the return value by exit */
#define SC_ARG1(r) ((r)->regs[1])
#define SC_ARG2(r) ((r)->regs[2])
#define SC_ARG3(r) ((r)->regs[3])
#define SC_ARG4(r) ((r)->regs[4])
#define SC_ARG5(r) ((r)->regs[5])
#else
#error "dftrace-bpf: no syscall register table for this architecture"
#endif

#endif
