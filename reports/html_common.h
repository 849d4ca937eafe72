// What every part of the HTML page shares: escaping text for HTML and for a <script> element, and
// the one colour each start method has on every chart of the page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/config/cell_config.h"

namespace sharebench {

std::string html_escape(const std::string& s);
// JSON inside <script>: '<', '>' and '&' written as \u escapes, so no crafted name ends the element.
std::string script_json(const nlohmann::json& j);
std::string start_colour(StartMethod m);
// A chart specification as the page's script reads it: {id, title, kind, xTitle, yTitle, datasets}.
nlohmann::json chart_spec(const std::string& id, const std::string& title, const std::string& x_title,
                          const std::string& y_title, nlohmann::json datasets, nlohmann::json extra = nlohmann::json::object());
// A chart id part from any text: letters and digits, the rest as '-'.
std::string id_part(std::string s);

}  // namespace sharebench
