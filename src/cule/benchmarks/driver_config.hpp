// A one-game C++ driver's settings (simt_driver.cpp's): the "key value" lines
// that python -m cule.benchmarks.simt writes, read into the ROM, the
// cartridge's settings, the palettes, the minimal action set and the vector
// env's options. Included after the core's headers.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace driver {

struct Config {
  std::map<std::string, std::string> kv;
  std::vector<uint8_t> image, gray, rgb;
  std::vector<int> actions;  // ALE action ids
  cule::RomSettings settings;
  cule::VectorOptions options;  // ale-py's defaults, with the game's mode
  long long num(const char* key) const { return std::stoll(kv.at(key)); }
  float sticky() const { return std::stof(kv.at("repeat_action_probability")); }
};

inline std::vector<int> ints(const std::string& text) {
  std::istringstream in(text);
  std::vector<int> v;
  for (int x; in >> x;) v.push_back(x);
  return v;
}

inline Config read_config(const char* path, cule::CartType cart) {
  Config c;
  std::ifstream config(path);
  for (std::string line; std::getline(config, line);) {
    const size_t space = line.find(' ');
    if (space != std::string::npos) c.kv[line.substr(0, space)] = line.substr(space + 1);
  }
  std::ifstream rom(c.kv.at("rom"), std::ios::binary);
  c.image.assign(std::istreambuf_iterator<char>(rom), std::istreambuf_iterator<char>());
  cule::RomSettings& s = c.settings;
  s.cart = cart;
  s.ystart = (uint16_t)c.num("ystart");
  s.height = (uint16_t)c.num("height");
  s.hmove_blanks = c.num("hmove_blanks") != 0;
  s.detect_format = c.kv.at("format") == "AUTO-DETECT";
  s.fixed_pal = c.kv.at("format") == "PAL";
  s.initial_switches = (uint8_t)c.num("initial_switches");
  s.controllers = cule::ControllerSetup{(uint8_t)c.num("left_paddles"), (uint8_t)c.num("right_paddles"),
                                        (uint8_t)c.num("swap_ports"), (uint8_t)c.num("swap_paddles"), 0, 0};
  for (int x : ints(c.kv.at("palette_gray"))) c.gray.push_back((uint8_t)x);
  for (int x : ints(c.kv.at("palette_rgb"))) c.rgb.push_back((uint8_t)x);
  c.actions = ints(c.kv.at("actions"));
  c.options.has_fire = 0;
  for (int a : c.actions) c.options.has_fire |= a == cule::kFire;
  c.options.default_mode = c.options.mode = (int32_t)c.num("mode");
  return c;
}

}  // namespace driver
