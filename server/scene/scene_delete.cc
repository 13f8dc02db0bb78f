// SPDX-License-Identifier: Apache-2.0
// Owns a scene's deletion on its strand (scene.h "Deletion"): its members closed with
// scene_deleted, its timers disarmed, and its rows erased after any commit in flight.
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/storage/persistence.h"

namespace scenecrdt::server {

void Scene::Delete(std::function<void(Deletion)> done) {
  net::asio::post(strand_, [this, done = std::move(done)]() mutable {
    deleted_ = true;
    on_deleted_ = std::move(done);
    deletion_.entities = store_.num_entities();
    deletion_.sessions = members_.size();
    flush_timer_.cancel();
    retry_timer_.cancel();
    rate_.Cancel();
    for (MemberState& m : members_) {
      m.member->PostClose(ErrorCode::kSceneDeleted,
                          "an operator deleted the scene (admin API); join again for an empty "
                          "scene");
    }
    // Their Leave finds nothing; their frames still queued here are dropped (Submit finds no
    // member), and nothing is acked: a client resends its unacked frames after a rejoin.
    members_.clear();
    acks_.ReleaseWaiters();
    if (!commit_in_flight_) EraseRows();  // else OnCommitted erases once it is done
  });
}

void Scene::AfterPending(std::function<void()> then) { net::asio::post(strand_, std::move(then)); }

void Scene::EraseRows() {
  ctx_.persistence().SubmitErase({name_, [this](bool ok, uint64_t rows) {
                                    net::asio::post(strand_, [this, ok, rows] {
                                      deletion_.ok = ok;
                                      deletion_.rows = rows;
                                      auto done = std::move(on_deleted_);
                                      if (done) done(deletion_);
                                    });
                                  }});
}

}  // namespace scenecrdt::server
