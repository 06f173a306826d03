// Parameter types of the DSL: durations, token and block counts, bandwidths, workers, tiers and
// small number words (counts may group thousands: 13,890), each parsed exactly so scenarios can
// state numbers with units.
import { defineParameterType } from '@cucumber/cucumber';
import { parseDurationNs } from '../../src/time';
import type { Tier } from '../../src/events/model';

const NUMBER_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, eight: 8, sixteen: 16 };

defineParameterType({
  name: 'duration',
  regexp: /\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)/,
  transformer: (text: string) => parseDurationNs(text),
});

defineParameterType({
  name: 'count',
  regexp: /\d{1,3}(?:,\d{3})+|\d+|one|two|three|four|five|six|eight|sixteen/,
  transformer: (text: string) => (text in NUMBER_WORDS ? NUMBER_WORDS[text] : Number(text.replaceAll(',', ''))),
});

defineParameterType({
  name: 'tokens',
  regexp: /\d+[- ]tokens?/,
  transformer: (text: string) => Number(text.match(/\d+/)![0]),
});

defineParameterType({
  name: 'blocks',
  regexp: /\d+ blocks?/,
  transformer: (text: string) => Number(text.match(/\d+/)![0]),
});

defineParameterType({
  name: 'bandwidth',
  regexp: /\d+(?:\.\d+)? GB\/s/,
  transformer: (text: string) => Number(text.match(/\d+(?:\.\d+)?/)![0]),
});

const TIER_WORDS: Record<string, Tier> = {
  'host memory': 'HostPinned',
  G2: 'HostPinned',
  HostPinned: 'HostPinned',
  'GPU memory': 'Device',
  G1: 'Device',
  Device: 'Device',
};

defineParameterType({
  name: 'tier',
  regexp: /host memory|GPU memory|G1|G2|HostPinned|Device/,
  transformer: (text: string) => TIER_WORDS[text],
});

defineParameterType({
  name: 'weight',
  regexp: /\d+(?:\.\d+)?/,
  transformer: (text: string) => Number(text),
});
