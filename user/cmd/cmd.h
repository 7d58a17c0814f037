/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The offline subcommands: dftrace-bpf NAME ARGS... */
#ifndef CMD_CMD_H
#define CMD_CMD_H

int merge_main(int argc, char **argv);
int summary_main(int argc, char **argv);
int report_main(int argc, char **argv);
int dump_main(int argc, char **argv);

#endif
