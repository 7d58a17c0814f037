// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>
#include "write/keys.h"
#include "write/v2.h"

static const char *const type_names[V2__COUNT] = {
#define V2_TYPE_NAME(v, n) [v] = #n,
	V2_TYPES(V2_TYPE_NAME)
#undef V2_TYPE_NAME
};

const char *v2_type_name(enum v2_type t)
{
	return (unsigned)t < V2__COUNT ? type_names[t] : NULL;
}

#define CAT_IS(c, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((c), (lit), (n)))

/* The choices for the categories DFTracer has no layer of are argued in
 * doc/trace-format.md ("Format v2"). */
enum v2_type v2_type_of_cat(const char *cat, size_t n)
{
	if (CAT_IS(cat, n, "POSIX") || CAT_IS(cat, n, "STDIO") || CAT_IS(cat, n, "DEVICE") ||
	    CAT_IS(cat, n, "IOCTL"))
		return V2_LIBC_IO;
	if ((n >= 4 && !memcmp(cat, "CUDA", 4)) || CAT_IS(cat, n, "CUFILE"))
		return V2_CUDA;
	if (CAT_IS(cat, n, "NCCL"))
		return V2_MPI;
	if (CAT_IS(cat, n, "dftracer") || CAT_IS(cat, n, "PROC"))
		return V2_DFTRACER;
	/* the AI tree's regions, torch's, dftrace.profiler's */
	return V2_PYTHON;
}

enum v2_type v2_type_of_name_cat(const char *name_cat, size_t len)
{
	static const char key[] = "\"cat\":\"";
	const size_t klen = sizeof(key) - 1;
	const char *close, *cat;

	/* the cat is last, "...","cat":"<cat>",: back from its closing quote
	 * to its opening one. A fragment not so, or a cat holding an escaped
	 * quote, is none of the categories above: a user's region's. */
	if (len < klen + 2)
		return V2_PYTHON;
	close = name_cat + len - 2;
	if (close[0] != '"' || close[1] != ',')
		return V2_PYTHON;
	for (cat = close; cat > name_cat && cat[-1] != '"'; cat--)
		;
	if (cat - name_cat < (ptrdiff_t)klen || memcmp(cat - klen, key, klen))
		return V2_PYTHON;
	return v2_type_of_cat(cat, close - cat);
}

/* The layers this build can trace, under DFTracer's build keys and ours
 * (it can trace them all; whether a kernel lets it is said in start's
 * args.features). */
static const char build_object[] =
	"{\"mpi\":0,\"hdf5\":0,\"hip\":0,\"cuda\":1,\"finstrument\":0,\"posix\":1,"
	"\"nccl\":1,\"cufile\":1,\"usdt\":1,\"python\":1}";

void v2_end_objects(struct jbuf *b, const char *cfg, uint32_t used_mask)
{
	bool first = true;

	JB_KEY(b, cfg);
	jb_char(b, '{');
	if (cfg)
		jb_mem(b, cfg, strlen(cfg));
	jb_char(b, '}');
	JB_KEY(b, build);
	JB_LIT(b, build_object);
	JB_KEY(b, used);
	jb_char(b, '{');
	for (int t = V2_DFTRACER + 1; t < V2__COUNT; t++) {
		if (!(used_mask & 1u << t))
			continue;
		if (!first)
			jb_char(b, ',');
		first = false;
		jb_char(b, '"');
		jb_mem(b, type_names[t], strlen(type_names[t]));
		JB_LIT(b, "\":1");
	}
	jb_char(b, '}');
	JB_KEY(b, app);
	JB_LIT(b, "{}");
}
