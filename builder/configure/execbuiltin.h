/*
 * Answers mkimage-exec gives itself instead of starting a program: the path questions
 * initramfs-tools' copy_file() asks for every file it puts into an initramfs (`realpath -ms`,
 * `realpath -s`, `readlink -f`: some 10 000 runs in a bootable build), each otherwise a second exec
 * and a dynamic link of coreutils for a few system calls. Only the shapes of question whose answer
 * is certain are answered; any other, and any error, is left to the program itself.
 */
#ifndef MKI_EXECBUILTIN_H
#define MKI_EXECBUILTIN_H

enum execbuiltin { EXECBUILTIN_NONE, EXECBUILTIN_REALPATH, EXECBUILTIN_READLINK };

/**
 * Answer `args` (`n` of them, the program's arguments without its name) as the program `b`
 * would, on standard output: the exit status, or -1 with nothing written when the program must.
 */
int execbuiltin_run(enum execbuiltin b, int n, char **args);

#endif
