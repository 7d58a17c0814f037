// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * minitrain.c in C++: a miniature training job annotated with the C++ side
 * of dftrace/usdt.h. A dataset of sample files is written, then read back
 * through a data loader in an epoch/step loop; each batch goes through a
 * compute phase (forward, backward, optimizer step), and a checkpoint is
 * written at the end of every epoch.
 *
 * Scoped annotations are RAII objects: the end probe fires on every way out
 * of the scope, and the program takes each of them:
 *  - return: the loader keeps the last sample it read (a batch's second
 *    sample is the next batch's first) and returns early from data.item;
 *  - exception: the optimizer step of epoch 0, step 1 throws a gradient
 *    overflow (the step is skipped, as a loss scaler does), and the first
 *    checkpoint throws after writing half of its bytes (it is written
 *    again);
 *  - lambda: the forward pass is a lambda;
 *  - destructor: the fetch iterator is never ended by hand, it ends its last
 *    wait when it goes out of scope (that wait found nothing: no event).
 * The backward pass is bracketed with explicit BEGIN/END.
 *
 * It prints what it did as JSON lines (its ground truth for the tests), as
 * minitrain.c does:
 *   {"kind":"io","pid":..,"op":"read","path":..,"bytes":..,"cat":..,"name":..,"epoch":..,"step":..}
 *   {"kind":"region","pid":..,"cat":..,"name":..}      one per region ended
 * and one line per exception the training loop caught:
 *   {"kind":"caught","pid":..,"cat":..,"name":..,"epoch":..,"step":..,"what":..}
 * naming the region the exception left.
 *
 * Usage: minitrain_cpp DIR [EPOCHS] [STEPS]
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>
#include <dftrace/usdt.h>

namespace {

const long kCheckpointBytes = 64 << 10;

long sample_bytes(int i)
{
	return 4096L * (1 + i % 4);
}

/* The context as the annotations set it, for the ground truth. */
long epoch = -1, step = -1;

void truth_io(const char *op, const std::string &path, long bytes,
	      const char *cat, const char *name)
{
	std::printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"%s\",\"path\":\"%s\",\"bytes\":%ld,"
		    "\"cat\":\"%s\",\"name\":\"%s\",\"epoch\":%ld,\"step\":%ld}\n",
		    getpid(), op, path.c_str(), bytes, cat, name, epoch, step);
}

void truth_region(const char *cat, const char *name)
{
	std::printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\"}\n",
		    getpid(), cat, name);
}

/* A region that must carry these args of its own (and only it). */
void truth_region_args(const char *cat, const char *name, long batch, const char *kind)
{
	std::printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\","
		    "\"args\":{\"batch\":%ld,\"kind\":\"%s\"}}\n",
		    getpid(), cat, name, batch, kind);
}

void truth_caught(const char *cat, const char *name, const std::exception &ex)
{
	std::printf("{\"kind\":\"caught\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\","
		    "\"epoch\":%ld,\"step\":%ld,\"what\":\"%s\"}\n",
		    getpid(), cat, name, epoch, step, ex.what());
}

void set_epoch(int e)
{
	epoch = e;
	DFT_USDT_SET_EPOCH(e);
}

void set_step(int s)
{
	step = s;
	DFT_USDT_SET_STEP(s);
}

std::system_error io_error(const std::string &path)
{
	return std::system_error(errno, std::generic_category(), path);
}

/* Writes BYTES zero bytes to OUT and flushes them to PATH. */
void put(std::ofstream &out, const std::string &path, long bytes, const char *cat,
	 const char *name)
{
	static const std::vector<char> zeros(kCheckpointBytes);

	out.write(zeros.data(), bytes);
	if (!out.flush())
		throw io_error(path);
	truth_io("write", path, bytes, cat, name);
}

void write_file(const std::string &path, long bytes, const char *cat, const char *name)
{
	std::ofstream out(path, std::ios::binary | std::ios::trunc);

	if (!out)
		throw io_error(path);
	put(out, path, bytes, cat, name);
}

long read_file(const std::string &path, const char *cat, const char *name)
{
	std::ifstream in(path, std::ios::binary);
	char buf[4096];
	long total = 0;

	if (!in)
		throw io_error(path);
	while (in.read(buf, sizeof(buf)) || in.gcount() > 0)
		total += in.gcount();
	if (in.bad())
		throw io_error(path);
	truth_io("read", path, total, cat, name);
	return total;
}

struct GradientOverflow : std::runtime_error {
	GradientOverflow() : std::runtime_error("gradient overflow, step skipped") {}
};

struct CheckpointFault : std::runtime_error {
	explicit CheckpointFault(long written)
		: std::runtime_error("injected fault after " + std::to_string(written) + " bytes")
	{
	}
};

class Dataset {
public:
	Dataset(const std::string &dir, int n) : dir_(dir), n_(n) {}

	std::string path(int i) const
	{
		char name[32];

		std::snprintf(name, sizeof(name), "/sample_%03d.bin", i);
		return dir_ + name;
	}

	void write() const
	{
		DFT_USDT_PREPROCESS();
		for (int i = 0; i < n_; i++)
			write_file(path(i), sample_bytes(i), "data", "preprocess");
		truth_region("data", "preprocess");
	}

private:
	std::string dir_;
	int n_;
};

/* Reads a dataset's sample files, one data.item each, keeping the last
 * one read. */
class DataLoader {
public:
	explicit DataLoader(const Dataset &data) : data_(data), cached_(-1), cached_bytes_(0) {}

	long item(int i)
	{
		DFT_USDT_ITEM();
		truth_region("data", "item");
		if (i == cached_)
			return cached_bytes_; /* data.item ends here too */
		cached_bytes_ = read_file(data_.path(i), "data", "item");
		cached_ = i;
		return cached_bytes_;
	}

private:
	const Dataset &data_;
	int cached_;
	long cached_bytes_;
};

/* Writes DIR/checkpoint_EE.ckpt. The first save fails half-way. */
class Checkpointer {
public:
	explicit Checkpointer(const std::string &dir) : dir_(dir), fault_(true)
	{
		DFT_USDT_CHECKPOINT_INIT();
		truth_region("checkpoint", "checkpoint.init");
	}

	void save(int e)
	{
		char name[32];

		DFT_USDT_CAPTURE();
		truth_region("checkpoint", "capture");
		std::snprintf(name, sizeof(name), "/checkpoint_%02d.ckpt", e);
		std::string path = dir_ + name;
		std::ofstream out(path, std::ios::binary | std::ios::trunc);
		if (!out)
			throw io_error(path);
		if (fault_) {
			fault_ = false;
			put(out, path, kCheckpointBytes / 2, "checkpoint", "capture");
			throw CheckpointFault(kCheckpointBytes / 2);
		}
		put(out, path, kCheckpointBytes, "checkpoint", "capture");
	}

private:
	std::string dir_;
	bool fault_;
};

volatile long sink;

long collate(long a, long b)
{
	DFT_USDT_DERIVE("data", "preprocess", "collate");
	truth_region("data", "preprocess.collate");
	return a + b;
}

void backward(long batch)
{
	DFT_USDT_BACKWARD_BEGIN();
	for (long k = 0; k < 20000; k++)
		sink = sink - (batch & k);
	DFT_USDT_BACKWARD_END();
	truth_region("compute", "backward");
}

void optimizer_step(int e, int s)
{
	DFT_USDT_STEP();
	truth_region("compute", "step");
	if (e == 0 && s == 1)
		throw GradientOverflow();
	sink = sink + 1;
}

void compute(long batch, int e, int s)
{
	auto forward = [](long b) {
		DFT_USDT_FORWARD();
		DFT_USDT_ARG_INT("batch", b);
		DFT_USDT_ARG_STR("kind", "dense");
		for (long k = 0; k < 20000; k++)
			sink = sink + (b ^ k);
		truth_region_args("compute", "forward", b, "dense");
	};

	forward(batch);
	backward(batch);
	try {
		optimizer_step(e, s);
	} catch (const GradientOverflow &ex) {
		truth_caught("compute", "step", ex);
	}
}

void run_epoch(DataLoader &loader, Checkpointer &ckpt, int e, int steps)
{
	DFT_USDT_EPOCH();
	DFT_USDT_EPOCH_START_META();
	{
		dft_usdt_iter it = DFT_USDT_FETCH_ITER();

		for (int s = 0;; s++) {
			dft_usdt_iter_wait(&it);
			if (s == steps)
				break;
			set_step(s);
			long a = loader.item(s), b = loader.item((s + 1) % steps);
			truth_region("dataloader", "fetch.iter");
			dft_usdt_iter_body(&it);
			compute(collate(a, b), e, s);
			truth_region("dataloader", "fetch.block");
		}
	} /* out of scope: the destructor drops the last wait, which found no
	   * element: N elements, N fetch.iter events, as pydftracer */
	for (;;) {
		try {
			ckpt.save(e);
			break;
		} catch (const CheckpointFault &ex) {
			truth_caught("checkpoint", "capture", ex);
		}
	}
	DFT_USDT_EPOCH_STOP_META();
	truth_region("pipeline", "epoch");
}

} /* namespace */

int main(int argc, char **argv)
{
	int epochs = argc > 2 ? std::atoi(argv[2]) : 2, steps = argc > 3 ? std::atoi(argv[3]) : 4;

	if (argc < 2 || argc > 4 || epochs < 1 || steps < 1) {
		std::fprintf(stderr, "usage: minitrain_cpp DIR [EPOCHS] [STEPS]\n");
		return 2;
	}
	try {
		std::string dir = argv[1];
		if (mkdir(dir.c_str(), 0755) && errno != EEXIST)
			throw io_error(dir);
		Checkpointer ckpt(dir);
		Dataset data(dir, steps);
		data.write();
		DataLoader loader(data);
		{
			DFT_USDT_TRAIN();
			for (int e = 0; e < epochs; e++) {
				set_epoch(e);
				run_epoch(loader, ckpt, e, steps);
			}
			truth_region("pipeline", "train");
		}
	} catch (const std::exception &ex) {
		std::fprintf(stderr, "minitrain_cpp: %s\n", ex.what());
		return 1;
	}
	return 0;
}
