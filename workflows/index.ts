// The workflow bundle's entry: every workflow the worker runs is exported here.
export { healthProbe } from './health-probe';
