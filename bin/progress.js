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

/** How often the phases' status line is redrawn from its poll (the times it shows advance by the second). */
const PHASE_REFRESH_MS = 1000;

/**
 * qualify's live status line on a terminal (cli-progress): phases done of all and what runs now,
 * redrawn every second from `poll` (src/signoff/phaseConsole.ts), with the lines printed
 * meanwhile written above it. Null when the stream is not a terminal: piped output stays plain.
 * `write` prints a line whether or not the line is shown; `stop` removes it (and may be called twice).
 */
function phaseProgress(stream = process.stdout, refreshMs = PHASE_REFRESH_MS) {
  if (!stream.isTTY) return null;
  let multibar = null;
  let bar = null;
  let timer = null;
  const draw = (poll) => {
    const status = poll();
    bar.setTotal(status.total);
    bar.update(status.done, { status: status.text });
  };
  const display = {
    start(poll) {
      const status = poll();
      multibar = new cliProgress.MultiBar(
        {
          stream,
          format: 'qualify |{bar}| {value}/{total} phases · {status}',
          barsize: 10,
          // As for the replay: no terminal mode changed, and too long a line cut to the terminal's width.
          hideCursor: false,
          linewrap: true,
          clearOnComplete: true,
          gracefulExit: false,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      bar = multibar.create(status.total, status.done, { status: status.text });
      timer = setInterval(() => draw(poll), refreshMs);
      return { stop: () => display.stop() };
    },
    write(text) {
      if (multibar === null) stream.write(text);
      else multibar.log(text);
    },
    stop() {
      if (multibar === null) return;
      clearInterval(timer);
      multibar.update(); // writes what was logged since the last redraw
      multibar.stop();
      multibar = null;
    },
  };
  return display;
}

module.exports = { replayProgress, etaText, phaseProgress };
