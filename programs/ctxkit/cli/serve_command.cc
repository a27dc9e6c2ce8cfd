// `ctxkit serve`: the HTTP server (http_server.h) over the store.

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <ostream>
#include <thread>

#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/host_command.h"
#include "programs/ctxkit/http/http_server.h"

namespace ctxkit::program {

namespace {

// SIGTERM and SIGINT, blocked in every thread of the server and taken by
// one waiting thread with sigtimedwait: no async-signal-safety concerns,
// and the workers inherit the mask because it is set before they start.
class ServeSignals {
 public:
  ServeSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, &old_mask_);
    // A client that goes away mid-response must not kill the server.
    signal(SIGPIPE, SIG_IGN);
  }
  ~ServeSignals() {
    Finish();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  ServeSignals(const ServeSignals&) = delete;
  ServeSignals& operator=(const ServeSignals&) = delete;

  // Calls server.Stop() on the first signal; a second one ends the process
  // at once, for a drain that takes longer than the user will wait.
  void StopOnSignal(http::HttpServer& server) {
    waiter_ = std::thread([this, &server] {
      int received = 0;
      const timespec tick{0, 100'000'000};
      while (!done_.load()) {
        const int signo = sigtimedwait(&set_, nullptr, &tick);
        if (signo < 0) continue;  // timeout or EINTR: look at done_ again
        if (++received == 1) {
          std::cerr << "ctxkit serve: stopping (finishing requests in "
                       "flight)\n";
          server.Stop();
        } else {
          std::cerr << "ctxkit serve: second signal, exiting now\n";
          _exit(128 + signo);
        }
      }
    });
  }

  // Ends the waiting thread; after it returns no signal touches the server,
  // which may then be destroyed.
  void Finish() {
    done_.store(true);
    if (waiter_.joinable()) waiter_.join();
  }

 private:
  sigset_t set_;
  sigset_t old_mask_;
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace

Status RunServe(const Args& args, std::ostream& out) {
  auto loaded = CommandConfig(args, out);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return Status();  // --print-config
  const host::HostConfig& config = **loaded;
  // Refuse an unsafe or broken setup before the store is created.
  if (auto token = http::CheckServeConfig(config); !token.ok()) {
    return token.status();
  }
  ServeSignals signals;
  auto services = OpenServicesForCommand(config, args);
  if (!services.ok()) return services.status();
  auto server = http::HttpServer::Create(**services);
  if (!server.ok()) return server.status();
  // Tests and scripts read the port from this line (port 0 = a free one).
  std::cerr << "ctxkit serve: listening on " << (*server)->url() << std::endl;
  signals.StopOnSignal(**server);
  Status status = (*server)->Serve();
  signals.Finish();
  return status;
}

}  // namespace ctxkit::program
