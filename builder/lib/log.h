/* The one place that prints. Stages log through here and report progress through a callback. */
#ifndef MKI_LOG_H
#define MKI_LOG_H

#include <stddef.h>
#include <stdint.h>

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

/** Number of warnings logged so far (for the build report). */
unsigned log_warning_count(void);
/**
 * The texts of the first 64 warnings logged so far (by log_msg and its wrappers, whatever the
 * threshold), unescaped, in order: the build report's. `*texts` stays the log's.
 */
size_t log_warning_texts(const char *const **texts);

/*
 * Progress of one step (e.g. "download"): a bar on a TTY, a line every few seconds and at the end
 * otherwise. Thread-safe. `total` may be 0 when unknown; units are whatever the caller counts
 * (bytes when `bytes` is set, so rate and ETA are shown in bytes).
 */
struct progress {
	const char *step;
	uint64_t total, done;
	int bytes;
	double started, last_print;
};

void log_progress_begin(struct progress *p, const char *step, uint64_t total, int bytes);
void log_progress_add(struct progress *p, uint64_t delta);
/** Print the final line of the step with elapsed time. */
void log_progress_end(struct progress *p);

/** Monotonic seconds, for timing stages. */
double log_now(void);

#endif
