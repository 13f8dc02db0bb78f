// SPDX-License-Identifier: Apache-2.0
// Owns DeletionJob's erase: the rows go after any commit in flight, and the answer is posted
// back to the scene's strand.
#include "scenecrdt/server/scene/deletion_job.h"

#include "scenecrdt/server/storage/persistence.h"

namespace scenecrdt::server {

void DeletionJob::Start(std::function<void(SceneDeletion)> done, std::size_t entities,
                        std::size_t sessions) {
  started_ = true;
  done_ = std::move(done);
  deletion_.entities = entities;
  deletion_.sessions = sessions;
}

void DeletionJob::EraseRows() {
  ctx_.persistence().SubmitErase({scene_, [this](bool ok, uint64_t rows) {
                                    net::asio::post(strand_, [this, ok, rows] {
                                      deletion_.ok = ok;
                                      deletion_.rows = rows;
                                      auto done = std::move(done_);
                                      if (done) done(deletion_);
                                    });
                                  }});
}

}  // namespace scenecrdt::server
