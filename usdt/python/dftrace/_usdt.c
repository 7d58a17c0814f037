// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace._usdt: the probes of include/dftrace/usdt.h, in this module's own
 * shared object (probes, notes and semaphores), for Python callers.
 *
 * Every function takes str arguments (UTF-8 through the string's cached
 * representation: no allocation for ASCII names) and ints; none allocates.
 * enabled() is true while a tracer has attached any of the probes, so
 * callers can skip marshalling arguments otherwise.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <dftrace/usdt.h>

static int str_arg(PyObject *o, const char **out, const char *what)
{
	Py_ssize_t n;

	if (o == Py_None) {
		*out = NULL;
		return 0;
	}
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyUnicode_AsUTF8AndSize(o, &n);
	return *out ? 0 : -1;
}

/*
 * Region names kept where they cannot change: a tracer reads a region's
 * strings once per place they live, not at every hit, when that memory
 * is read-only (dftrace-bpf: annotation sites). A str's UTF-8 lives in
 * the heap, so each distinct name is copied once into pages of our own,
 * made read-only again after each copy (a name is never written twice).
 * Names past the arena's room go as they are. */
#define ARENA_PAGES 64
#define NAMES_MAX 1024

static char *arena;
static size_t arena_used, arena_size;
static struct { Py_hash_t hash; const char *s; } names[NAMES_MAX];

static const char *arena_copy(const char *s, size_t n)
{
	char *at;

	if (!arena) {
		arena_size = ARENA_PAGES * (size_t)sysconf(_SC_PAGESIZE);
		arena = mmap(NULL, arena_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED) {
			arena = NULL;
			return NULL;
		}
	}
	if (arena_used + n + 1 > arena_size ||
	    mprotect(arena, arena_size, PROT_READ | PROT_WRITE))
		return NULL;
	at = arena + arena_used;
	memcpy(at, s, n + 1);
	arena_used += n + 1;
	mprotect(arena, arena_size, PROT_READ);
	return at;
}

/* The arena's copy of a region's cat or name (o's UTF-8, s, n bytes):
 * found by the str's hash (cached in the object), copied if new. */
static const char *fixed_name(PyObject *o, const char *s, Py_ssize_t n)
{
	Py_hash_t h = PyObject_Hash(o);
	const char *copy;

	if (h == -1) {
		PyErr_Clear();
		return s;
	}
	for (size_t i = (size_t)h % NAMES_MAX, k = 0; k < NAMES_MAX; k++, i = (i + 1) % NAMES_MAX) {
		if (!names[i].s) {
			if (!(copy = arena_copy(s, n)))
				return s;
			names[i].hash = h;
			names[i].s = copy;
			return copy;
		}
		if (names[i].hash == h && !strncmp(names[i].s, s, n) && !names[i].s[n])
			return names[i].s;
	}
	return s;
}

static int int_arg(PyObject *o, int64_t *out)
{
	long long v;

	if (PyBool_Check(o)) {
		*out = o == Py_True;
		return 0;
	}
	v = PyLong_AsLongLong(o);
	if (v == -1 && PyErr_Occurred())
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int nargs_ok(const char *fn, Py_ssize_t n, Py_ssize_t min, Py_ssize_t max)
{
	if (n < min || n > max) {
		PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd arguments (%zd given)",
			     fn, min, max, n);
		return 0;
	}
	return 1;
}

static PyObject *region(int end, const char *fn, PyObject *const *args, Py_ssize_t n)
{
	const char *cat, *name;
	int64_t count = 0;
	int fixed = 0;

	if (!nargs_ok(fn, n, 2, 3) || str_arg(args[0], &cat, "cat") ||
	    str_arg(args[1], &name, "name") || (n == 3 && int_arg(args[2], &count)))
		return NULL;
	if (!cat || !name) {
		PyErr_SetString(PyExc_TypeError, "cat and name must be str");
		return NULL;
	}
	if (DFT__ON(DFT_USDT_RING_PROBE) || (end ? DFT__ON(region_end) : DFT__ON(region_begin))) {
		const char *c = fixed_name(args[0], cat, strlen(cat));
		const char *nm = fixed_name(args[1], name, strlen(name));

		/* the arena's copies never change: the ring may hold them */
		fixed = c != cat && nm != name;
		cat = c;
		name = nm;
	}
	dft__region_at(end, cat, name, count, fixed);
	Py_RETURN_NONE;
}

static PyObject *py_region_begin(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	return region(0, "region_begin", args, n);
}

static PyObject *py_region_end(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	(void)self;
	return region(1, "region_end", args, n);
}

static PyObject *py_meta(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	const char *cat, *name;
	int64_t is_end = 0;

	(void)self;
	if (!nargs_ok("meta", n, 3, 3) || str_arg(args[0], &cat, "cat") ||
	    str_arg(args[1], &name, "name") || int_arg(args[2], &is_end))
		return NULL;
	if (!cat || !name) {
		PyErr_SetString(PyExc_TypeError, "cat and name must be str");
		return NULL;
	}
	dft__meta(cat, name, is_end);
	Py_RETURN_NONE;
}

static PyObject *kv(int which, const char *fn, PyObject *const *args, Py_ssize_t n)
{
	const char *key, *s = NULL;
	int64_t v = 0;

	if (!nargs_ok(fn, n, 2, 2) || str_arg(args[0], &key, "key"))
		return NULL;
	if (!key) {
		PyErr_SetString(PyExc_TypeError, "key must be str");
		return NULL;
	}
	if (which & 1) {
		if (str_arg(args[1], &s, "value"))
			return NULL;
		if (!s)
			s = "None";
	} else if (int_arg(args[1], &v)) {
		return NULL;
	}
	switch (which) {
	case 0: dft__ctx_int(key, v); break;
	case 1: dft__ctx_str(key, s); break;
	case 2: dft__arg_int(key, v); break;
	case 3: dft__arg_str(key, s); break;
	}
	Py_RETURN_NONE;
}

static PyObject *py_ctx_int(PyObject *self, PyObject *const *a, Py_ssize_t n)
{
	(void)self;
	return kv(0, "ctx_int", a, n);
}

static PyObject *py_ctx_str(PyObject *self, PyObject *const *a, Py_ssize_t n)
{
	(void)self;
	return kv(1, "ctx_str", a, n);
}

static PyObject *py_arg_int(PyObject *self, PyObject *const *a, Py_ssize_t n)
{
	(void)self;
	return kv(2, "arg_int", a, n);
}

static PyObject *py_arg_str(PyObject *self, PyObject *const *a, Py_ssize_t n)
{
	(void)self;
	return kv(3, "arg_str", a, n);
}

static PyObject *py_ctx_clear(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	const char *key = NULL;

	(void)self;
	if (!nargs_ok("ctx_clear", n, 0, 1) || (n == 1 && str_arg(args[0], &key, "key")))
		return NULL;
	dft__ctx_clear(key);
	Py_RETURN_NONE;
}

static PyObject *py_enabled(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (DFT_USDT_ENABLED())
		Py_RETURN_TRUE;
	Py_RETURN_FALSE;
}

/* Every probe's semaphore raised: a tracer has attached all of them (they
 * attach one by one, and enabled() is true after the first). dftrace-bpf
 * attaches regions, where it takes them, before these. */
static PyObject *py_ready(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (DFT__ON(region_begin) && DFT__ON(region_end) && DFT__ON(meta) &&
	    DFT__ON(ctx_int) && DFT__ON(ctx_str) && DFT__ON(ctx_clear) &&
	    DFT__ON(arg_int) && DFT__ON(arg_str))
		Py_RETURN_TRUE;
	Py_RETURN_FALSE;
}

#define FAST(name, doc) { #name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, doc }

static PyMethodDef methods[] = {
	FAST(region_begin, "region_begin(cat, name, count=0): open a region"),
	FAST(region_end, "region_end(cat, name, count=0): close the innermost region cat/name"),
	FAST(meta, "meta(cat, name, is_end): instant CM event <name>.start / <name>.end"),
	FAST(ctx_int, "ctx_int(key, v): process-wide context, an arg of every later event"),
	FAST(ctx_str, "ctx_str(key, v): process-wide context, an arg of every later event"),
	FAST(ctx_clear, "ctx_clear(key=None): drop one context key, or every user key"),
	FAST(arg_int, "arg_int(key, v): an arg of this thread's innermost open region"),
	FAST(arg_str, "arg_str(key, v): an arg of this thread's innermost open region"),
	{ "enabled", py_enabled, METH_NOARGS,
	  "enabled() -> bool: True while a tracer is attached to this module's probes" },
	{ "ready", py_ready, METH_NOARGS,
	  "ready() -> bool: True once a tracer has attached every probe of this module" },
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "dftrace._usdt",
	"USDT probes of dftrace-bpf (include/dftrace/usdt.h)", -1, methods,
	NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__usdt(void)
{
	return PyModule_Create(&module);
}
