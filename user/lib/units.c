// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "lib/units.h"

void units_ns(char *buf, size_t len, int64_t ns)
{
	double v = ns < 0 ? -(double)ns : (double)ns;
	const char *sign = ns < 0 ? "-" : "";

	if (v >= 1e9)
		snprintf(buf, len, "%s%.2f s", sign, v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%s%.1f ms", sign, v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%s%.1f us", sign, v / 1e3);
	else
		snprintf(buf, len, "%s%.0f ns", sign, v);
}

static const char *const byte_units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };

static void scaled(char *buf, size_t len, double v, const char *suffix)
{
	int u = 0;

	while (v >= 1024 && u < 5)
		v /= 1024, u++;
	snprintf(buf, len, u ? "%.1f %s%s" : "%.0f %s%s", v, byte_units[u], suffix);
}

void units_bytes(char *buf, size_t len, uint64_t bytes)
{
	scaled(buf, len, bytes, "");
}

void units_rate(char *buf, size_t len, uint64_t bytes, int64_t ns)
{
	if (ns <= 0)
		snprintf(buf, len, "-");
	else
		scaled(buf, len, bytes * 1e9 / ns, "/s");
}
