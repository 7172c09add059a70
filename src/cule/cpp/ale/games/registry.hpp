// GameId -> the game's code: the one place the per-game units are listed.
#pragma once

#include "game.hpp"
#include "includes.inc"

namespace cule {

enum class GameId : uint8_t {
#define CULE_GAME(id, Type) id,
#include "list.inc"
#undef CULE_GAME
  kCount
};

#if !defined(__CUDACC_RTC__)
constexpr const char* kGameNames[] = {
#define CULE_GAME(id, Type) #id,
#include "list.inc"
#undef CULE_GAME
};
// The unit's C++ name, which a game-specific kernel build compiles in.
constexpr const char* kGameUnits[] = {
#define CULE_GAME(id, Type) #Type,
#include "list.inc"
#undef CULE_GAME
};
#endif

// Dispatch on a run-time game id; in a kernel the id is the same for every
// thread, so the switch costs no divergence.
struct Games {
  CULE_HD static void reset(uint8_t id, GameState& g) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: games::Type::reset(g); return;
#include "list.inc"
#undef CULE_GAME
    }
  }
  CULE_HD static void step(uint8_t id, GameState& g, const GameView& v) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: games::Type::step(g, v); return;
#include "list.inc"
#undef CULE_GAME
    }
  }
  CULE_HD static int lives(uint8_t id, const GameState& g) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: return games::Type::lives(g);
#include "list.inc"
#undef CULE_GAME
    }
    return 0;
  }
  CULE_HD static int starting_action(uint8_t id, int i) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: return games::Type::starting_action(i);
#include "list.inc"
#undef CULE_GAME
    }
    return -1;
  }
  CULE_HD static bool is_legal(uint8_t id, int action) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: return games::Type::is_legal(action);
#include "list.inc"
#undef CULE_GAME
    }
    return true;
  }
  template <class Env>
  CULE_HD static void set_mode(uint8_t id, Env& env, int mode) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: games::Type::set_mode(env, mode); return;
#include "list.inc"
#undef CULE_GAME
    }
  }
#if !defined(__CUDACC_RTC__)  // host-only (set-up): NVRTC rejects unannotated functions
  static void paddle_range(uint8_t id, int32_t& lo, int32_t& hi) {
    switch (id) {
#define CULE_GAME(id, Type) case (uint8_t)GameId::id: lo = games::Type::kPaddleMin; hi = games::Type::kPaddleMax; return;
#include "list.inc"
#undef CULE_GAME
    }
  }
#endif
};

// The same interface for one game known at compile time: a kernel build
// specialised for one game (python -m cule.kernels --game-specific) and the
// fuzz driver use it; the mappers' builds dispatch with Games.
template <class T>
struct OneGame {
  CULE_HD static void reset(uint8_t, GameState& g) { T::reset(g); }
  CULE_HD static void step(uint8_t, GameState& g, const GameView& v) { T::step(g, v); }
  CULE_HD static int lives(uint8_t, const GameState& g) { return T::lives(g); }
  CULE_HD static int starting_action(uint8_t, int i) { return T::starting_action(i); }
  CULE_HD static bool is_legal(uint8_t, int action) { return T::is_legal(action); }
  template <class Env>
  CULE_HD static void set_mode(uint8_t, Env& env, int mode) { T::set_mode(env, mode); }
#if !defined(__CUDACC_RTC__)  // host-only (set-up): NVRTC rejects unannotated functions
  static void paddle_range(uint8_t, int32_t& lo, int32_t& hi) {
    lo = T::kPaddleMin;
    hi = T::kPaddleMax;
  }
#endif
};

}  // namespace cule
