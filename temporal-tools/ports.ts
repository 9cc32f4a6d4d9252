export { freeLoopbackPort as freePort } from '../infra/ports';
