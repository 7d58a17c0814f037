// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The C++ side of dftrace/usdt.h: scoped regions are RAII objects, so
 * the end probe fires on every way out of a scope (return, exception,
 * lambda), and an iterator closes its open .iter/.block when it goes out
 * of scope. Prints its ground truth as JSON lines like minitrain.c.
 * Usage: minitrain_cpp DIR
 */
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <dftrace/usdt.h>

static void truth_region(const char *cat, const char *name)
{
	std::printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\"}\n",
		    getpid(), cat, name);
}

static void truth_io(const char *op, const std::string &path, long bytes,
		     const char *cat, const char *name)
{
	std::printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"%s\",\"path\":\"%s\",\"bytes\":%ld,"
		    "\"cat\":\"%s\",\"name\":\"%s\",\"epoch\":0,\"step\":-1}\n",
		    getpid(), op, path.c_str(), bytes, cat, name);
}

/* Leaves by an early return. */
static long load(const std::string &path, bool skip)
{
	DFT_USDT_ITEM();
	truth_region("data", "item");
	if (skip)
		return 0;
	std::ifstream in(path, std::ios::binary);
	std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	truth_io("read", path, (long)data.size(), "data", "item");
	return (long)data.size();
}

/* Leaves by an exception. */
static void failing_step()
{
	DFT_USDT_STEP();
	truth_region("compute", "step");
	throw std::runtime_error("step failed");
}

/* A fetch loop left by an exception in its third body: no iter_done()
 * runs, the iterator's destructor ends fetch.block 3. */
static void fetch_until_failure(const std::string &path)
{
	dft_usdt_iter it = DFT_USDT_FETCH_ITER();

	for (int n = 1;; n++) {
		dft_usdt_iter_wait(&it);
		truth_region("dataloader", "fetch.iter");
		dft_usdt_iter_body(&it);
		truth_region("dataloader", "fetch.block");
		if (n == 3)
			throw std::runtime_error("loader failed");
		load(path, true);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: minitrain_cpp DIR\n");
		return 2;
	}
	std::string dir = argv[1], path = dir + "/sample.bin";
	mkdir(dir.c_str(), 0755);
	DFT_USDT_SET_EPOCH(0);
	{
		DFT_USDT_PREPROCESS();
		std::ofstream(path, std::ios::binary) << std::string(10000, 'x');
		truth_io("write", path, 10000, "data", "preprocess");
		truth_region("data", "preprocess");
	}
	{
		DFT_USDT_TRAIN();
		auto forward = [&]() {
			DFT_USDT_FORWARD();
			truth_region("compute", "forward");
			return load(path, false) + load(path, true);
		};
		forward();
		try {
			failing_step();
		} catch (const std::exception &) {
		}
		try {
			fetch_until_failure(path);
		} catch (const std::exception &) {
		}
		truth_region("pipeline", "train");
	}
	return 0;
}
