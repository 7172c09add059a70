// The cartridge mappers of ALE's 108 ROMs, as Stella (vendored by ALE) maps
// them: 2K 4K F8 F6 F8SC F6SC E0 FE DPC (Stella's Cart2K.cxx, Cart4K.cxx,
// CartF8.cxx, ..., CartDPC.cxx; their reset draws from the system RNG,
// Random.cxx). This header includes
// them all; the interface they share is described in cart_state.hpp, and
// mappers.inc lists them.
#pragma once

#include "cart/cart_state.hpp"
#include "cart/fixed.hpp"   // 2K, 4K, FE
#include "cart/banked.hpp"  // F8, F6, F8SC, F6SC
#include "cart/e0.hpp"
#include "cart/dpc.hpp"
