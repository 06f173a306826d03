// Switches on the planted simulator fault KVQUAL_SIM_FAULT names (src/fuzz/simulatorFaults.ts), for the
// sign-off's check that every scenario can fail: `npm run qualify` reruns the scenarios that passed
// with each fault in turn. An unknown name stops the run before any scenario, naming the known ones.
import { plantSimulatorFault, simulatorFaultAsked } from '../../src/fuzz/simulatorFaults';

plantSimulatorFault(simulatorFaultAsked(process.env));
