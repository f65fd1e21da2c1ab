// SIGINT and SIGTERM during a run (InterruptGuard, regress_pipeline.h): delivered through
// g_unix_signal_add, so that no work happens in a signal handler.
#include <glib-unix.h>

#include <atomic>
#include <csignal>

#include "regress_pipeline.h"

namespace regress {

namespace {

std::atomic<int> g_interrupt_signal{0};

gboolean on_unix_signal(gpointer data) {
  g_interrupt_signal.store(GPOINTER_TO_INT(data));
  return G_SOURCE_CONTINUE;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

InterruptGuard::InterruptGuard() {
  ids_[0] = g_unix_signal_add(SIGINT, on_unix_signal, GINT_TO_POINTER(SIGINT));
  ids_[1] = g_unix_signal_add(SIGTERM, on_unix_signal, GINT_TO_POINTER(SIGTERM));
}

InterruptGuard::~InterruptGuard() {
  interrupted();  // dispatch what arrived meanwhile
  for (unsigned id : ids_)
    if (id) g_source_remove(id);
}

int interrupted() {
  while (g_main_context_iteration(nullptr, FALSE)) {
  }
  return g_interrupt_signal.load();
}

}  // namespace regress
