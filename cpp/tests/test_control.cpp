// On-demand control (session/control.hpp): window database names and who may control.
#include <gtest/gtest.h>

#include "session/control.hpp"

namespace c = rocprof::session::control;

TEST(Control, WindowNameGoesBeforeTheSuffix) {
  EXPECT_EQ(c::window_template("/o/%hostname%/%pid%_results.db", 1),
            "/o/%hostname%/%pid%_w1_results.db");
  EXPECT_EQ(c::window_template("run_results.db", 12), "run_w12_results.db");
  EXPECT_EQ(c::window_template("/o/name", 3), "/o/name_w3");  // no suffix: appended
}

TEST(Control, OnlyTheSameUserOrRootMayControl) {
  EXPECT_TRUE(c::peer_allowed(1000, 1000));
  EXPECT_TRUE(c::peer_allowed(0, 1000));
  EXPECT_FALSE(c::peer_allowed(1001, 1000));
  EXPECT_FALSE(c::peer_allowed(65534, 0));  // root's process: other users refused too
}
