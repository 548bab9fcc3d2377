/* The one place that prints. Stages log through here and report progress through a callback. */
#ifndef MKI_LOG_H
#define MKI_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "strv.h"

enum log_level { LOG_QUIET = -1, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/** Set the threshold; messages above it are dropped. Default LOG_INFO. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/**
 * Print one message at `level` to stderr (when at or above the threshold); errno is preserved.
 * printf-style; a newline is added. Messages: lowercase, no full stop, names in '...'.
 */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Every message is one line: bytes a terminal acts on (control characters, ESC, newlines, C1,
 * invalid UTF-8) are printed escaped (buf_add_printable: \x1b, \n), wherever they came from, so
 * nothing a package names, ships or prints can move the cursor or forge a line of mkimage's.
 * Text of many lines (a command's output) goes through log_block().
 */

/**
 * Log the printf-style head line, then each line of `text` (`len` bytes, e.g. the output of a
 * command in the tree) as a line of its own, "  | LINE", escaped like every message. Counts as
 * one warning at LOG_WARN.
 */
void log_block(enum log_level level, const char *text, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** log_block() on the terminal only: for text the log file has whole already (log_output()). */
void log_block_terminal(enum log_level level, const char *text, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * Log an error and return `code` (a negative errno or -MKI_E_* code), so that logging where the
 * context is richest and failing take one statement:
 *     return log_errno(-errno, "cannot create '%s': %m", dir);
 * For a negative errno, %m in `fmt` prints its text; errno itself is left as it was.
 */
int log_errno(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Log messages more severe than `level` at `level` (LOG_ERROR: as they are); returns the previous
 * setting. For an optional step whose failure its caller reports once, as a warning: the step's
 * own messages then say why without counting as errors or warnings.
 */
enum log_level log_cap_severity(enum log_level level);

/*
 * One meaning for "error" (mkimage(7), "Errors and warnings"): a message at error level means
 * the build fails. What mkimage works around is a warning that says what it used instead
 * (log_warn_instead), which the report lists.
 */

/**
 * Log a warning "MSG; used INSTEAD instead" and keep the pair for the build report's
 * "worked_around" (the first 64). `instead` says what mkimage used (e.g. "os-release's ID
 * 'debian' as the entry token").
 */
void log_warn_instead(const char *instead, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** A worked-around problem and what was used instead, as log_warn_instead() kept them. */
struct log_workaround {
	char *what, *instead;
};

/** The problems worked around so far (the first 64), in order; `*v` stays the log's. */
size_t log_workarounds(const struct log_workaround **v);

/**
 * Number of messages logged at error level so far (after log_cap_severity()), in this process
 * and, once log_file_start() ran, in every process forked from it since.
 */
unsigned log_error_count(void);

/**
 * The guard that keeps an error an error: `ret` when it is an error already or no message was
 * logged at error level; else a build that would succeed after printing an error, which is
 * logged as an internal error naming `step` and the first such message, and -MKI_E_INTERNAL.
 */
int log_fail_on_errors(int ret, const char *step);

/** Number of warnings logged so far (for the build report). */
unsigned log_warning_count(void);
/**
 * The texts of the first 64 warnings logged so far (by log_msg and its wrappers, whatever the
 * threshold), unescaped, in order: the build report's. `*texts` stays the log's.
 */
size_t log_warning_texts(const char *const **texts);

/*
 * Progress of one step (e.g. "download"): a bar on a TTY, repainted in place and cut to the
 * terminal's width (read at each repaint), a line every few seconds and at the end otherwise.
 * Thread-safe. `total` may be 0 when unknown; units are whatever the caller counts (bytes when
 * `bytes` is set, so rate and ETA are shown in bytes). A step may name what it is at (`item`).
 */
struct progress {
	const char *step;
	uint64_t total, done;
	int bytes;
	double started, last_print, last_line;
	char item[96]; /* what the step is at, printable ASCII; "" none */
};

#define LOG_HEARTBEAT 30 /* seconds without a line, without a terminal, before "still running" */
#define LOG_LINE_MAX 4096 /* a command's output line longer than this is cut into several */

void log_progress_begin(struct progress *p, const char *step, uint64_t total, int bytes);
void log_progress_add(struct progress *p, uint64_t delta);
/**
 * Set the count and what the step is at (`item`, e.g. a package's name; bytes outside printable
 * ASCII are shown as '?'). Without a terminal a line is printed each time the item changes, so a
 * log shows each one (the caller bounds how many there are); on a terminal the bar is repainted
 * (at most ten times a second).
 */
void log_progress_set(struct progress *p, uint64_t done, const char *item);
/**
 * For a long wait: on a terminal, the bar's elapsed time is repainted; without one a
 * "still running" line names the item and the elapsed time after LOG_HEARTBEAT seconds
 * without a line, so a CI log never stalls silently.
 */
void log_progress_tick(struct progress *p);
/** Print the final line of the step with elapsed time. */
void log_progress_end(struct progress *p);
/** Take the bar off the terminal, printing nothing (the caller says how the step ended). */
void log_progress_clear(struct progress *p);

/*
 * The build log (mkimage(1), FILES: NAME.log): every message at every level, whatever -v and -q
 * say, each line with its UTC time, and the whole output of every command run in the tree
 * (log_output), bounded by a size limit; written to a temp file beside it and renamed at the end.
 */

/** Keep every line from now on for the log (in memory, at most 1 MiB, until log_file_open). */
void log_file_start(void);
/**
 * Open the log's file (unnamed in the directory of `path` where the filesystem allows, else
 * `path`.tmp-PID), write what was kept, and write every line to it from now on, at most `limit`
 * bytes (then one line saying so). 0 or -errno.
 */
int log_file_open(const char *path, uint64_t limit);
/**
 * `len` bytes of output of the command `what` (hostile: escaped, cut at LOG_LINE_MAX), into the
 * log only, as "output: WHAT | LINE" lines; `text` NULL: the command ended (its last line).
 */
void log_output(const char *what, const char *text, size_t len);
/** Name the log's file `path` (via its temp name): 0 or -errno (nothing is then left). */
int log_file_commit(void);
/** In a child process that closed the log's fd: write no more to it (lines are kept in memory). */
void log_file_forget(void);
/** Remove the log's temp file (if any) and stop keeping lines. */
void log_file_discard(void);
/** The first error messages logged (at most 16, each at most 4 KiB), for the build report. */
const struct strv *log_errors(void);

/** Monotonic seconds, for timing stages. */
double log_now(void);

#endif
