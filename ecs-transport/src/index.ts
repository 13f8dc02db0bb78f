// Owns the public surface of @scenecrdt/ecs-transport (docs/ECS-TRANSPORT.md).
export { ScenecrdtEcsTransport } from './transport'
export type { ConnectionState, EcsTransportOptions, TransportStats, WebSocketConstructor, WebSocketLike } from './transport'
export { Outbox } from './outbox'
export type { OutboxCounters } from './outbox'

import { EcsTransportOptions, ScenecrdtEcsTransport } from './transport'

/** engine.addTransport(createEcsTransport({ url: 'ws://127.0.0.1:7601/dcl/lobby' })) */
export function createEcsTransport(options: EcsTransportOptions): ScenecrdtEcsTransport {
  return new ScenecrdtEcsTransport(options)
}
