// PluginRegistry: the registry of one family of plug-ins (the harness's detectors, the kinds of
// fault), filled on first use with the family's built-in members in their order. A family defines,
// in its own namespace, beside its interface:
//   void register_builtin_plugins(PluginRegistry<Detector>& registry);   // one line per member
//   std::string_view plugin_key(const Detector& d);                      // what find() looks up
// and names the registry: using DetectorRegistry = PluginRegistry<Detector>;
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sharebench {

template <typename Plugin>
class PluginRegistry {
 public:
  static PluginRegistry& instance() {
    static PluginRegistry* registry = [] {
      auto* r = new PluginRegistry;  // never destroyed: a worker may still read it at exit
      register_builtin_plugins(*r);
      return r;
    }();
    return *registry;
  }

  void add(std::unique_ptr<Plugin> plugin) { plugins_.push_back(std::move(plugin)); }
  const std::vector<std::unique_ptr<Plugin>>& all() const { return plugins_; }

  const Plugin* find(std::string_view key) const {
    for (const auto& p : plugins_) {
      if (plugin_key(*p) == key) return p.get();
    }
    return nullptr;
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& p : plugins_) out.emplace_back(plugin_key(*p));
    return out;
  }

 private:
  std::vector<std::unique_ptr<Plugin>> plugins_;
};

}  // namespace sharebench
