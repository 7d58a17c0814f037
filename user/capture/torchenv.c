// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/torchenv.h"

/* Where the dftrace Python package is: $DFTRACE_PYTHON_DIR, the source
 * build next to this binary (build/python), or the copy `make install`
 * put beside it (PREFIX/bin and PREFIX/lib/dftrace-bpf/python), found
 * from the binary's own path so that any PREFIX or DESTDIR works. */
static int python_dir(char *out, size_t len)
{
	const char *envdir = getenv("DFTRACE_PYTHON_DIR");
	char exe[PATH_MAX - 64]; /* room for what out adds */
	ssize_t n;

	if (envdir && *envdir) {
		snprintf(out, len, "%s", envdir);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(out, len, "(no path for the tracer's own binary)");
		return -ENOENT;
	}
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(out, len, "%s/build/python", exe);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/../lib/dftrace-bpf/python", exe);
	return access(out, R_OK) ? -ENOENT : 0;
}

int torch_environment(char *err, size_t errlen)
{
	const char *old = getenv("PYTHONPATH");
	char dir[PATH_MAX], *path;

	if (python_dir(dir, sizeof(dir))) {
		snprintf(err, errlen, "--torch needs the dftrace Python package: "
			 "not found at '%s' (set DFTRACE_PYTHON_DIR)", dir);
		return -ENOENT;
	}
	if (asprintf(&path, "%s/dftrace_boot:%s%s%s", dir, dir,
		     old && *old ? ":" : "", old && *old ? old : "") < 0)
		return -ENOMEM;
	setenv("PYTHONPATH", path, 1);
	free(path);
	return 0;
}
