// Planted simulator faults, the test double of the sign-off's "scenarios must be able to fail"
// check (src/signoff/faults.ts): with one switched on, the simulator itself is wrong in one small
// way, and a scenario whose Then steps still pass cannot tell a broken simulator from a working
// one. Each fault is one line in the code it breaks, marked "planted fault"; the steps switch it on
// from SIMULATOR_FAULT_ENV (steps/support/faults.ts) and scripts/suiteInProcess.ts between its runs,
// never src/ itself. A leaf module (it imports nothing), so that any part of the simulator may ask it.
/** The environment variable naming the planted simulator fault of a cucumber run. */
export const SIMULATOR_FAULT_ENV = 'KVQUAL_SIM_FAULT';

/** Every planted simulator fault, in the order the sign-off tries them, with what it breaks. */
export const SIMULATOR_FAULTS = {
  'event-ids': "the router's mirror expects each event id one higher than the next in sequence",
  placement: 'the router places every request on the next rank after the one it chose',
  'long-blocks': 'prompts are cut into blocks one token longer than the block size',
  time: 'every request arrives 1 ms later than written',
  drift: 'each simulation of a process starts its requests 1 ns later than the one before it',
  config: 'every configuration problem is reported without its place or its words',
  'short-blocks': 'prompts are cut into blocks one token shorter than the block size',
  reuse: 'the engine reuses no cached tokens (no G1 prefix, no G2 hit)',
  lag: 'KV events reach the router after twice their lag',
  'g2-off': 'the engine finds nothing in host memory (G2)',
  'pass-time': 'every engine pass takes 1 µs longer',
  'mirror-off': "the router's replay forgets the impossible event that stopped it",
  'host-bandwidth': 'host memory (G2) bandwidths are read as twice what is written',
  chain: "a block's sequence hash leaves out the blocks before it",
  'tie-draw': "the router's draw among tied ranks always takes the first",
  'pool-split': 'every rank of a shared host memory pool gets a pool of its own',
  'trace-blocks': "a trace's hash ids are read as blocks of half the trace's block size",
} as const;

export type SimulatorFault = keyof typeof SIMULATOR_FAULTS;

export const SIMULATOR_FAULT_NAMES = Object.keys(SIMULATOR_FAULTS) as SimulatorFault[];

let plantedFault: SimulatorFault | null = null;

/** Switches a planted simulator fault on (or off with null) for this process. */
export function plantSimulatorFault(fault: SimulatorFault | null): void {
  plantedFault = fault;
}

/** True when this fault is planted: the one-line hooks in the simulator ask this. */
export function faultPlanted(fault: SimulatorFault): boolean {
  return plantedFault === fault;
}

/** Nanoseconds the planted 'pass-time' fault adds to every engine pass (0 without it). */
export function plantedPassDelayNs(): number {
  return faultPlanted('pass-time') ? 1_000 : 0;
}

/** With the planted 'host-bandwidth' fault, doubles every host memory bandwidth of a validated configuration's roles (else nothing). */
export function plantHostBandwidthFault(roles: readonly { host_offload?: object | null }[]): void {
  if (!faultPlanted('host-bandwidth')) return;
  for (const role of roles) {
    const offload = role.host_offload as Record<string, unknown> | null | undefined;
    if (!offload) continue;
    for (const key of HOST_BANDWIDTHS) if (typeof offload[key] === 'number') offload[key] = (offload[key] as number) * 2;
  }
}

const HOST_BANDWIDTHS = ['d2h_bandwidth_gbps', 'h2d_bandwidth_gbps', 'shared_d2h_bandwidth_gbps', 'shared_h2d_bandwidth_gbps'];

let simulationsMade = 0;

/** Counts a simulation made in this process; with the planted 'drift' fault, how many ns later its requests start (else 0). */
export function plantedDriftNs(): number {
  simulationsMade++;
  return faultPlanted('drift') ? simulationsMade : 0;
}

/** The fault SIMULATOR_FAULT_ENV names, or null when unset or ""; any other name is an error naming the known ones. */
export function simulatorFaultAsked(env: NodeJS.ProcessEnv): SimulatorFault | null {
  const value = env[SIMULATOR_FAULT_ENV];
  if (value === undefined || value === '') return null;
  if ((SIMULATOR_FAULT_NAMES as string[]).includes(value)) return value as SimulatorFault;
  throw new Error(`${SIMULATOR_FAULT_ENV}="${value}": expected one of ${SIMULATOR_FAULT_NAMES.join(', ')}`);
}
