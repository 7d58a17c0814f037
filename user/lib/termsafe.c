// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "lib/termsafe.h"

/* The length of the UTF-8 character at s if it is a valid one and no C1
 * control (U+0080..U+009F); 0 otherwise. */
static size_t printable_utf8(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	unsigned cp = s[0] & (0x7f >> n);

	if (!n || s[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode, and C1 */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return n;
}

size_t termsafe(char *out, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0;

	while (*p) {
		char esc[5];
		const char *piece = esc;
		size_t n = 1, take;

		if (*p == '\\') {
			piece = "\\\\";
			take = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			take = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p);
		} else if (*p < 0x80) {
			piece = (const char *)p;
			take = 1;
		} else if ((n = printable_utf8(p))) {
			piece = (const char *)p;
			take = n;
		} else {
			n = 1;
			take = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p);
		}
		if (size && len + take < size)
			memcpy(out + len, piece, take);
		else if (size && len < size)
			size = len + 1; /* full: nothing more goes in */
		len += take;
		p += n;
	}
	if (size)
		out[len < size ? len : size - 1] = 0;
	return len;
}
