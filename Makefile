# dftrace-bpf: build with Debian 12's packaged libbpf, bpftool and clang.
PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/.*DFTRACE_VERSION "\(.*\)"/\1/p' user/version.h)
DESTDIR ?=
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
OUT := build
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# An architecture is supported once vmlinux/<arch>/vmlinux.h and its
# lines of bpf/arch.h exist.
ifeq ($(wildcard vmlinux/$(ARCH)/vmlinux.h),)
$(error dftrace-bpf: architecture '$(ARCH)' is not supported (no vmlinux/$(ARCH)/vmlinux.h; see vmlinux/gen.sh))
endif

LIBBPF_CFLAGS := $(shell pkg-config --cflags libbpf 2>/dev/null)
# One binary for every distribution: libbpf, libelf and zlib linked in
# (Ubuntu 22.04 ships libbpf 0.5, RHEL 8 none), and ISA-L loaded at run
# time where it is installed (Debian ships no static one; lib/gz.c falls
# back to zlib), so that the tracer needs only libc's family. The tests
# and benches link the same way.
STATIC_LIBS := -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic
CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	  -I$(OUT) -Ibpf -Iuser -Iinclude $(LIBBPF_CFLAGS)
LDLIBS := $(STATIC_LIBS) -lm -ldl
# libbpf's parses of the kernel's BTF, one for all of start-up
# (user/capture/kernelbtf.h): for what links the tracer's objects
BTF_ONCE := -Wl,--wrap=btf__load_vmlinux_btf -Wl,--wrap=btf__free -Wl,--wrap=btf__parse
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	      -idirafter /usr/include/$(shell $(CC) -dumpmachine) \
	      $(LIBBPF_CFLAGS) -Wall -Wno-unused-function

# user/: main.c, then one folder per stage of a record (capture ->
# correlate -> write) over the model and lib.
USER_SRCS := $(wildcard user/*.c user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(OUT)/user/main.o,$(USER_OBJS))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(wildcard tests/unit/test_*.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUT)/workloads/%,$(wildcard tests/workloads/*.c))
EXAMPLES := $(patsubst usdt/examples/%.c,$(OUT)/examples/%,$(filter-out usdt/examples/lib%.c,$(wildcard usdt/examples/*.c))) \
	    $(patsubst usdt/examples/%.cpp,$(OUT)/examples/%,$(wildcard usdt/examples/*.cpp)) \
	    $(patsubst usdt/examples/%.c,$(OUT)/examples/%.so,$(wildcard usdt/examples/lib*.c))
CXX ?= c++
BENCHES := $(patsubst tests/bench/%.c,$(OUT)/bench/%,$(wildcard tests/bench/*.c))
# Stand-ins for the GPU libraries (tests/standin), under their sonames,
# and the libraries tests load in many copies (liblaunch.so, which
# defines cuLaunchKernel alone; libannotated.so, every annotation);
# ptxjob drives a real GPU (tests/device).
STANDINS := $(OUT)/standin/libcuda.so.1 $(OUT)/standin/libnccl.so.2 $(OUT)/standin/libcufile.so.0 \
	    $(OUT)/standin/liblaunch.so $(OUT)/standin/libannotated.so
WORKLOADS += $(OUT)/workloads/gpujob-dl $(OUT)/workloads/annotate-oldnotes
DEVICE_PROGS := $(OUT)/device/ptxjob

.PHONY: all clean install test bench python sanitized fuzz
all: dftrace-bpf $(UNIT_TESTS) $(STANDINS) $(WORKLOADS) $(BENCHES) $(EXAMPLES) \
     $(DEVICE_PROGS) python sanitized fuzz

# The Python package (usdt/python) with its probe extension, built for
# Debian's interpreter into build/python: what --torch and the tests use.
# The opt-in `dftracer` compatibility package (pydftracer's import paths)
# goes to build/python/compat, on no path unless PYTHONPATH names it.
PYTHON ?= /usr/bin/python3
PY_SRCS := $(shell find usdt/python -name '*.py' -o -name '*.c' 2>/dev/null | grep -v /build/)
python: $(OUT)/python/.built
$(OUT)/python/.built: $(PY_SRCS) $(wildcard include/dftrace/*.h)
	rm -rf $(OUT)/python && mkdir -p $(OUT)/python
	mkdir -p $(OUT)/python/compat
	cp -r usdt/python/dftrace usdt/python/dftrace_boot $(OUT)/python/
	cp -r usdt/python/dftracer $(OUT)/python/compat/
	cd usdt/python && $(PYTHON) setup.py -q build_ext --build-lib=$(CURDIR)/$(OUT)/python \
		--build-temp=$(CURDIR)/$(OUT)/python/tmp >/dev/null
	touch $@

$(OUT) $(OUT)/tests $(OUT)/workloads $(OUT)/bench $(OUT)/examples:
	@mkdir -p $@

# The kernel side: one unit per feature (bpf/*.bpf.c but the bench's),
# linked into one object, as retsnoop does. core, which defines what the
# others declare, first.
BPF_UNITS := bpf/core.bpf.c $(filter-out bpf/core.bpf.c bpf/probecost.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_UNITS))
BPF_HDRS := $(wildcard bpf/*.h) vmlinux/$(ARCH)/vmlinux.h

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/dftrace.bpf.o: $(BPF_OBJS) | $(OUT)
	$(BPFTOOL) gen object $@ $^

$(OUT)/dftrace.skel.h: $(OUT)/dftrace.bpf.o
	$(BPFTOOL) gen skeleton $< name dftrace_bpf > $@.tmp && mv $@.tmp $@

# Each object depends on the headers it includes (-MMD); every one waits
# for the skeleton, which some include.
$(OUT)/user/%.o: user/%.c $(OUT)/dftrace.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(USER_OBJS:.o=.d)

dftrace-bpf: $(USER_OBJS)
	$(CC) $(CFLAGS) $^ $(BTF_ONCE) $(LDLIBS) -o $@

$(OUT)/tests/%: tests/unit/%.c tests/unit/check.h $(LIB_OBJS) | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB_OBJS) $(BTF_ONCE) $(LDLIBS) -o $@

# The readers' and analyses' unit tests again under ASan and UBSan, as
# build/tests/test_*-san (tests/run runs them with the others): a trace
# file is hostile input, and these are the code that parses it. Any
# finding aborts the test.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_SRCS := $(wildcard user/read/*.c user/lib/*.c user/model/*.c user/analyze/*.c)
SAN_OBJS := $(patsubst user/%.c,$(OUT)/san/%.o,$(SAN_SRCS))
SAN_TESTS := $(patsubst %,$(OUT)/tests/%-san,test_read $(notdir $(basename $(wildcard tests/unit/test_analyze*.c))))
sanitized: $(SAN_TESTS)

$(OUT)/san/%.o: user/%.c $(OUT)/dftrace.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

-include $(SAN_OBJS:.o=.d)

$(OUT)/tests/%-san: tests/unit/%.c tests/unit/check.h $(SAN_OBJS) | $(OUT)/tests
	$(CC) $(CFLAGS) $(SAN_FLAGS) -Itests/unit $< $(SAN_OBJS) $(LDLIBS) -o $@

# The reader under libFuzzer (tests/fuzz), built by clang with buffers of
# a few bytes, so that every read boundary falls everywhere in a trace.
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	      -DREAD_BUF_START=16 -DREAD_RAW_BUF=7
FUZZ_SRCS := $(wildcard user/read/*.c user/analyze/*.c) user/lib/gz.c user/lib/vec.c \
	     user/lib/hash.c user/lib/hmap.c user/lib/heap.c user/lib/units.c user/lib/pfor.c \
	     user/lib/termsafe.c user/model/syscalls.c
fuzz: $(OUT)/fuzz/fuzz_reader $(OUT)/fuzz/fuzz_service

$(OUT)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c $(FUZZ_SRCS) $(wildcard user/read/*.h user/analyze/*.h) user/lib/gz.h user/lib/vec.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -Wall -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf $< $(FUZZ_SRCS) -o $@ -lz -ldl -lm

$(OUT)/fuzz/fuzz_service: tests/fuzz/fuzz_service.c user/service/proto.c user/service/policy.c \
		user/service/proto.h user/service/policy.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -Wall -std=gnu11 -D_GNU_SOURCE -Iuser $< user/service/proto.c \
		user/service/policy.c -o $@

$(OUT)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h include/dftrace/*.h) | $(OUT)/workloads
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude $< -o $@ -lpthread -ldl $(LDLIBS_WL)

# no libc: after its exec, its first call is an open (tests/fold.bats)
$(OUT)/workloads/rawopen: tests/workloads/rawopen.c | $(OUT)/workloads
	$(CC) -O2 -Wall -Wextra -static -nostdlib -ffreestanding -fno-stack-protector $< -o $@

# the generator of rank traces writes them gzipped
$(OUT)/workloads/ranktraces: LDLIBS_WL := -lz

# static: no loader's I/O before main, outside the compute regions of
# its overlapped plant (tests/findings.bats)
$(OUT)/workloads/findings: LDLIBS_WL := -static-pie

# the one workload that drives io_uring through liburing
$(OUT)/workloads/uring: LDLIBS_WL := -luring

# The stand-ins: only the API exported (-fvisibility=hidden), and no two
# symbols folded into one address (-fno-ipa-icf), so that each function
# is a probe of its own.
STANDIN_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
		  -fPIC -shared -fvisibility=hidden -fno-ipa-icf -Iinclude
$(OUT)/standin/libcuda.so.1: tests/standin/cuda.c tests/standin/gpuapi.h
$(OUT)/standin/libnccl.so.2: tests/standin/nccl.c tests/standin/gpuapi.h
$(OUT)/standin/libcufile.so.0: tests/standin/cufile.c tests/standin/gpuapi.h
$(OUT)/standin/liblaunch.so: tests/standin/launch.c tests/standin/gpuapi.h
$(OUT)/standin/libannotated.so: tests/standin/annotated.c $(wildcard include/dftrace/*.h)
$(STANDINS):
	@mkdir -p $(dir $@)
	$(CC) $(STANDIN_CFLAGS) -Wl,-soname,$(notdir $@) $(filter %.c,$^) -o $@

# Programs in build/*/ link the stand-ins by soname, found in
# build/standin at run time; gpujob-dl, gpujob built to dlopen them by
# soname, finds them there too.
STANDIN_RPATH := -Wl,-rpath,'$$ORIGIN/../standin'
STANDIN_LDLIBS := -L$(OUT)/standin -l:libcuda.so.1 -l:libnccl.so.2 -l:libcufile.so.0 \
		  $(STANDIN_RPATH)
$(OUT)/workloads/gpujob $(OUT)/workloads/ncclranks: $(STANDINS) tests/standin/gpuapi.h
$(OUT)/workloads/gpujob $(OUT)/workloads/ncclranks: LDLIBS_WL := $(STANDIN_LDLIBS)
$(OUT)/workloads/gpujob-dl: tests/workloads/gpujob.c $(wildcard tests/workloads/*.h) \
		tests/standin/gpuapi.h $(STANDINS) | $(OUT)/workloads
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude -DGPUJOB_DLOPEN $< -o $@ \
		-ldl $(STANDIN_RPATH)

# annotate with its threads' regions in the notes of an older usdt.h
$(OUT)/workloads/annotate-oldnotes: tests/workloads/annotate.c \
		$(wildcard tests/workloads/*.h include/dftrace/*.h) | $(OUT)/workloads
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude -DANNOTATE_OLD_NOTES $< -o $@ \
		-lpthread -ldl

# the GPU probes' cost per call, on the stand-ins
$(OUT)/bench/gpucalls: tests/bench/gpucalls.c tests/standin/gpuapi.h $(STANDINS) | $(OUT)/bench
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE $< -o $@ $(STANDIN_LDLIBS)

# the real-GPU test's program (tests/device/run): dlopens libcuda.so.1
$(OUT)/device/ptxjob: tests/device/ptxjob.c tests/standin/gpuapi.h $(wildcard tests/workloads/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude $< -o $@ -ldl

$(OUT)/bench/%: tests/bench/%.c $(wildcard include/dftrace/*.h) | $(OUT)/bench
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude $< -o $@

# the consumer alone: links the tracer's record path
$(OUT)/bench/replay: tests/bench/replay.c $(LIB_OBJS) | $(OUT)/bench
	$(CC) $(CFLAGS) $< $(LIB_OBJS) $(BTF_ONCE) $(LDLIBS) -o $@

$(OUT)/probecost.bpf.o: bpf/probecost.bpf.c vmlinux/$(ARCH)/vmlinux.h | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/probecost.skel.h: $(OUT)/probecost.bpf.o
	$(BPFTOOL) gen skeleton $< name probecost_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/bench/probecost: tests/bench/probecost.c $(OUT)/probecost.skel.h | $(OUT)/bench
	$(CC) $(CFLAGS) $< $(LDLIBS) -o $@

$(OUT)/examples/%: usdt/examples/%.c $(wildcard include/dftrace/*.h) | $(OUT)/examples
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iinclude $< -o $@ -lpthread -ldl

$(OUT)/examples/%: usdt/examples/%.cpp $(wildcard include/dftrace/*.h) | $(OUT)/examples
	$(CXX) -O2 -g -Wall -Wextra -std=c++11 -Iinclude $< -o $@

$(OUT)/examples/%.so: usdt/examples/%.c $(wildcard include/dftrace/*.h) | $(OUT)/examples
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -fPIC -shared -Iinclude $< -o $@

test: all
	tests/run

bench: all
	scripts/bench

install: dftrace-bpf python
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/include/dftrace
	install -m 0755 dftrace-bpf $(DESTDIR)$(PREFIX)/bin/dftrace-bpf
	install -m 0644 doc/dftrace-bpf.8 $(DESTDIR)$(PREFIX)/share/man/man8/dftrace-bpf.8
	install -m 0644 include/dftrace/*.h $(DESTDIR)$(PREFIX)/include/dftrace/
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' include/dftrace-usdt.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/dftrace-usdt.pc
	install -d $(DESTDIR)$(PREFIX)/lib/dftrace-bpf
	rm -rf $(DESTDIR)$(PREFIX)/lib/dftrace-bpf/python
	cp -r $(OUT)/python $(DESTDIR)$(PREFIX)/lib/dftrace-bpf/python
	rm -rf $(DESTDIR)$(PREFIX)/lib/dftrace-bpf/python/tmp $(DESTDIR)$(PREFIX)/lib/dftrace-bpf/python/.built

clean:
	rm -rf $(OUT) dftrace-bpf
