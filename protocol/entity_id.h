// SPDX-License-Identifier: Apache-2.0
// Owns DCL entity ids (number in the low 16 bits, version in the high 16) and component ids.
#pragma once

#include <cstdint>

namespace scenecrdt::protocol {

// A DCL entity id as it travels on the wire: number | version << 16.
using EntityId = uint32_t;
// A DCL component id (core::Transform is 1).
using ComponentId = uint32_t;

inline constexpr EntityId kRootEntity = 0;
inline constexpr EntityId kPlayerEntity = 1;
inline constexpr EntityId kCameraEntity = 2;
// Numbers below this are reserved (root, player, camera, avatars, static entities: ADR-219).
inline constexpr uint32_t kReservedEntityNumbers = 512;
// The largest number @dcl/ecs hands out (it throws past MAX_ENTITY_NUMBER - 1 = 65534).
inline constexpr uint32_t kMaxEntityNumber = 65534;
// Scene entity numbers available to a scene: 512 ..= 65535.
inline constexpr uint32_t kSceneEntityNumbers = 65536 - kReservedEntityNumbers;

inline constexpr ComponentId kTransformComponentId = 1;               // core::Transform
inline constexpr ComponentId kNetworkEntityComponentId = 1075645054;  // core-schema::Network-Entity

constexpr uint32_t EntityNumber(EntityId id) { return id & 0xFFFFu; }
constexpr uint32_t EntityVersion(EntityId id) { return id >> 16; }
constexpr EntityId MakeEntityId(uint32_t number, uint32_t version) {
  return (number & 0xFFFFu) | ((version & 0xFFFFu) << 16);
}
constexpr bool IsReservedEntityNumber(uint32_t number) { return number < kReservedEntityNumbers; }
constexpr bool IsReservedEntity(EntityId id) { return IsReservedEntityNumber(EntityNumber(id)); }

}  // namespace scenecrdt::protocol
