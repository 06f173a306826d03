// Switches on the planted simulator fault KVQUAL_SIM_FAULT names (src/fuzz/planted.ts), for the
// sign-off's check that every scenario can fail: `npm run qualify` reruns the scenarios that passed
// with each fault in turn. An unknown name stops the run before any scenario, naming the known ones.
import { plantSimulatorFault, simulatorFaultAsked } from '../../src/fuzz/planted';

plantSimulatorFault(simulatorFaultAsked(process.env));
