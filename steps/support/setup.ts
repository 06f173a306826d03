// The router-level setup a scenario describes (workers, data-parallel ranks, block size, event lag,
// router settings). Shared by the World and the engine-level scenario, so neither imports the other's
// module for it.
import type { RouterSettings } from '../../src/router/router';
import type { Nanos } from '../../src/time';

export interface ClusterSetup {
  workers: number;
  dp_size: number;
  block_size: number;
  lag_ns: Nanos;
  router: Omit<RouterSettings, 'block_size'>;
}
