// SPDX-License-Identifier: Apache-2.0
// Owns ClusterSceneNames: the scene list's source on a cluster node (storage/scene_names.h):
// the scenes with a stream in Redis, by a bounded SCAN (cluster/scene_scan.h) on a Redis
// connection of its own, used only on the directory's thread (docs/CLUSTER.md "Scene list").
#pragma once

#include <string>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/config.h"
#include "scenecrdt/server/storage/scene_names.h"

namespace scenecrdt::server {

// Connects lazily (the first listing); `key_prefix` is the node's (ClusterNode::key_prefix).
// Fails only on a URL that does not parse (the node checked it already).
Result<SceneNameSource> ClusterSceneNames(const ServerConfig& config, std::string key_prefix);

}  // namespace scenecrdt::server
