// A progress bar for long replays on a terminal (cli-progress): requests ended of submitted,
// virtual time reached, ETA. It appears only on a TTY and only once a replay has run for about a
// second; piped output gets nothing extra. Display only: it reads the wall clock, which the
// simulator never does (that is why it lives here, outside src/), and never changes a result.
'use strict';
const cliProgress = require('cli-progress');

const SHOW_AFTER_MS = 1000;

/**
 * The time left at the rate so far, as "45s" or "3m05s"; "…" until a request has ended (cli-progress's
 * own ETA reads "NFs" while its rate is zero).
 */
function etaText(ended, total, elapsedMs) {
  if (ended <= 0) return '…';
  const seconds = Math.max(0, Math.round(((total - ended) * elapsedMs) / ended / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** A display for one replay, or null when standard error is not a terminal. */
function replayProgress() {
  if (!process.stderr.isTTY) return null;
  const started = Date.now();
  let bar = null;
  let lastDraw = 0;
  return {
    update(ended, total, virtualMs) {
      const now = Date.now();
      if (bar === null) {
        if (now - started < SHOW_AFTER_MS) return;
        bar = new cliProgress.SingleBar(
          {
            stream: process.stderr,
            format: 'replay |{bar}| {value}/{total} requests ended · virtual {virtual} s · ETA {time_left}',
            // No terminal mode is changed (a hidden cursor, wrapping off): a replay stopped by Ctrl-C,
            // which cannot run a handler while it computes, would leave the user's shell that way.
            // Too long a line is cut to the terminal's width instead.
            // A short bar, so that the whole line fits 80 columns.
            barsize: 12,
            hideCursor: false,
            linewrap: true,
            clearOnComplete: true,
            synchronousUpdate: true,
            noTTYOutput: false,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, ended, { virtual: (virtualMs / 1000).toFixed(1), time_left: etaText(ended, total, now - started) });
      }
      if (now - lastDraw < 100 && ended < total) return;
      lastDraw = now;
      bar.setTotal(total);
      bar.update(ended, { virtual: (virtualMs / 1000).toFixed(1), time_left: etaText(ended, total, now - started) });
    },
    stop() {
      if (bar !== null) bar.stop();
    },
  };
}

module.exports = { replayProgress, etaText };
