/* signals.h - the census signal's names, and the names of signals in dumps. Shared so the
 * shim's FBCOUNT_SIGNAL and `fbcount snapshot --signal` read a value the same way. */
#ifndef FBR_SIGNALS_H
#define FBR_SIGNALS_H

/* Parses a census signal: USR1, USR2, WINCH, URG, a real-time signal (RTMIN+N, RTMAX-N) or
 * its number, with or without "SIG", any case; "none" gives 0. Signals that end, stop or
 * continue a program by default or by convention (TERM, INT, HUP, QUIT, ALRM, PIPE, the
 * crash signals, TSTP, ...) are refused, since handling them would change what they do.
 * Returns 0 with *sig set, or -1. */
int fbr_signal_parse(const char *value, int *sig);

/* "SIGTERM" for 15, "SIGRTMIN+3", or "SIG?" for a number it does not know. Returns a
 * static string: async-signal-safe. */
const char *fbr_signal_name(int sig);

#endif
