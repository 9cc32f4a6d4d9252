// The workflow bundle's entry: every workflow the worker runs is exported here.
export { deliverEvent } from './deliver-event';
export { endpointSupervisor } from './endpoint-supervisor';
export { healthProbe } from './health-probe';
export { purgeExpiredEvents } from './retention';
