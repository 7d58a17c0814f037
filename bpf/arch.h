/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What differs between architectures, for the kernel side:
 * - a syscall's number and arguments in the pt_regs the sys_enter and
 *   sys_exit tracepoints pass (libbpf 1.1's PT_REGS_PARMn_SYSCALL stops
 *   at the fifth argument and has no syscall number, so the table is
 *   ours; direct reads: the tp_btf pointer is trusted BTF);
 * - the bits of a user page fault's error code that say it wrote or
 *   fetched an instruction, where a tracepoint passes one
 *   (page_fault_user is x86's; elsewhere the program is not loaded, and
 *   mapped pages are not told apart by how they were touched).
 * Page indexes are in the kernel's page size, which user space reads
 * (sysconf): nothing here assumes 4 KiB.
 */
#ifndef DFTRACE_ARCH_H
#define DFTRACE_ARCH_H

#if defined(__TARGET_ARCH_x86)
#define SC_NR(r) ((r)->orig_ax)
#define SC_ARG0(r) ((r)->di)
#define SC_ARG1(r) ((r)->si)
#define SC_ARG2(r) ((r)->dx)
#define SC_ARG3(r) ((r)->r10)
#define SC_ARG4(r) ((r)->r8)
#define SC_ARG5(r) ((r)->r9)
/* a function's sixth argument, at a uprobe (libbpf 1.1 stops at the fifth) */
#define FN_ARG5(r) ((r)->r9)
#define FAULT_WRITE (1 << 1)	/* X86_PF_WRITE */
#define FAULT_INSTR (1 << 4)	/* X86_PF_INSTR */
#elif defined(__TARGET_ARCH_arm64)
#define SC_NR(r) ((r)->syscallno)
#define SC_ARG0(r) ((r)->orig_x0) /* x0 is the return value by exit */
#define SC_ARG1(r) ((r)->regs[1])
#define SC_ARG2(r) ((r)->regs[2])
#define SC_ARG3(r) ((r)->regs[3])
#define SC_ARG4(r) ((r)->regs[4])
#define SC_ARG5(r) ((r)->regs[5])
#define FN_ARG5(r) ((r)->regs[5])
#define FAULT_WRITE 0
#define FAULT_INSTR 0
#else
#error "dftrace-bpf: no syscall register table for this architecture"
#endif

#endif
