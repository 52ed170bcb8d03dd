/* units.h - bytes and durations for people: printing with binary units and three figures,
 * parsing suffixes; the one rule for the shim's summary and messages and the command. */
#ifndef FBR_UNITS_H
#define FBR_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Formats n as "512 B", "4.0 KiB", "1.5 GiB" into buf; returns buf. */
const char *fbr_bytes(uint64_t n, char *buf, size_t len);

/* Parses "4096", "4K", "4KiB", "1.5M", "2GB", "10 MiB" (K/KiB = 1024, KB = 1000, up to
 * T/TiB/TB; a trailing "B" alone means bytes). Returns 0, or -1 for anything else. */
int fbr_parse_bytes(const char *s, uint64_t *out);

/* Parses a plain non-negative decimal count; returns 0 or -1. */
int fbr_parse_count(const char *s, uint64_t *out);

/* Formats a duration in nanoseconds as "850 ns", "12.3 µs", "4.56 ms", "1.23 s", "2.5 min"
 * into buf; returns buf. */
const char *fbr_duration(uint64_t ns, char *buf, size_t len);

/* Parses a duration: a number with ns, us (or µs), ms, s, min or h; a bare number is
 * seconds ("1.5s", "200ms", "2min", "30"). Sets *ns; returns 0, or -1 for anything else. */
int fbr_parse_duration(const char *s, uint64_t *ns);

/* Bytes of one element of a dtype as dumps name them: libvkt's f32, f64, s32, u8; names
 * ending in their width in bits (float16, int64, bf16); PyTorch's Float, Double, Half, Long,
 * Int, Short, Byte, Char, Bool. 0 when unknown. */
size_t fbr_dtype_size(const char *dtype);

#endif
