export { freeLoopbackPort as freePort } from '../src/infra/ports';
