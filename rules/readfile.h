/* readfile.h - reading a small configuration file without trusting what the path names.
 *
 * The shim reads FBCOUNT_ALLOW in every process it is loaded into, and the command reads
 * allow files and dumps named on its command line: a FIFO must not block them, a device must
 * not feed them forever, and a directory must not pass as an empty file.
 */
#ifndef FBR_READFILE_H
#define FBR_READFILE_H

#include <stddef.h>

/* Reads the whole of path into a new NUL-terminated buffer (free with free()) and sets *len.
 * Opens without blocking and without becoming a controlling terminal; refuses anything but a
 * regular file (errno EINVAL) and a file of more than max bytes (errno EFBIG). NULL on
 * failure with errno set; fbr_read_error() words it. */
char *fbr_read_file(const char *path, size_t max, size_t *len);

/* A short phrase for the errno fbr_read_file left: "not a regular file", "larger than 1 MiB
 * (the most read)", or strerror's text. max is the limit that was passed. */
const char *fbr_read_error(int err, size_t max, char *buf, size_t cap);

#endif
