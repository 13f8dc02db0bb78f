// SPDX-License-Identifier: Apache-2.0
// Owns the cluster node's scene-name source (see cluster_scene_list.h).
#include "scenecrdt/server/cluster/cluster_scene_list.h"

#include <memory>
#include <string>

#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/cluster/redis_url.h"
#include "scenecrdt/cluster/scene_scan.h"

namespace scenecrdt::server {

Result<SceneNameSource> ClusterSceneNames(const ServerConfig& config, std::string key_prefix) {
  auto endpoint = cluster::ParseRedisUrl(config.redis_url, config.redis_password);
  if (!endpoint.has_value()) return endpoint.error();
  cluster::RedisOptions options;
  options.endpoint = endpoint.value();
  options.client_name = "scenecrdt-scene-list";  // logs as the node's connections do
  // Shared by the copies of the std::function; only the directory's thread calls it.
  auto redis = std::make_shared<cluster::RedisConnection>(std::move(options));
  return SceneNameSource(
      [redis, prefix = std::move(key_prefix)](std::size_t max_names) -> Result<StoredScenes> {
        auto scan = cluster::ScanSceneNames(*redis, prefix, max_names);
        if (!scan.has_value()) return scan.error();
        StoredScenes out;
        out.names = std::move(scan->names);
        out.complete = scan->complete;
        return out;
      });
}

}  // namespace scenecrdt::server
