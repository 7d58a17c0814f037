#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
/* argv: mode(perf|multi) binary offset cmd... */
int main(int argc, char **argv)
{
	int multi = !strcmp(argv[1], "multi");
	const char *bin = argv[2];
	unsigned long off = strtoul(argv[3], 0, 0);
	struct bpf_object *o = bpf_object__open_file("/tmp/n5/um/um.bpf.o", NULL);
	struct bpf_program *p = bpf_object__find_program_by_name(o, "hit");
	if (multi) bpf_program__set_expected_attach_type(p, 48);
	if (bpf_object__load(o)) { perror("load"); return 1; }
	if (multi) {
		union bpf_attr a; memset(&a, 0, sizeof(a));
		unsigned long offs[1] = { off };
		__u32 *w = (__u32 *)&a.link_create;
		w[0] = bpf_program__fd(p); w[2] = 48;
		__u64 *q = (__u64 *)&w[4];
		q[0] = (unsigned long)bin; q[1] = (unsigned long)offs; q[2] = 0; q[3] = 0;
		__u32 *r = (__u32 *)&q[4]; r[0] = 1; r[1] = 0; r[2] = 0;
		int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
		if (fd < 0) { perror("link_create"); return 1; }
	} else {
		struct bpf_link *l = bpf_program__attach_uprobe(p, false, -1, bin, off);
		if (!l) { perror("attach"); return 1; }
	}
	pid_t c = fork();
	if (!c) { execv(argv[4], argv + 4); _exit(127); }
	waitpid(c, 0, 0);
	return 0;
}
