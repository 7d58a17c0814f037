// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rawopen (x86-64): no libc, so that its first call after the exec that
 * starts it is an open (a libc program's start-up makes others first:
 * access, readlink...). It opens b.dat in its cwd, preads it three times
 * (100 bytes each) and exits: see "io exec-reuse".
 */
#include <fcntl.h>
#include <sys/syscall.h>

static long sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

void _start(void)
{
	static char buf[100];
	long fd = sys4(SYS_openat, AT_FDCWD, (long)"b.dat", O_RDONLY, 0);

	for (int i = 0; i < 3; i++)
		sys4(SYS_pread64, fd, (long)buf, sizeof(buf), 0);
	sys4(SYS_exit_group, fd < 0, 0, 0, 0);
}
