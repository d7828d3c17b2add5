"""What each spec field means, with its unit: the one table the JSON Schema's descriptions
(`trnplan.specs.schema`), `trnplan schema --fields` and the tests read.

Keys are `Model.field` (the pydantic model that declares the field; a field a base model declares, such as
`Provenance.sources`, is described once for every entity). A field added to a spec model needs a line
here: `tests/test_schema.py` names any field without one. The table lives beside the models, not in their
declarations, so that adding a field and describing it touch different lines.
"""

from __future__ import annotations

from typing import Any

FIELD_DOCS: dict[str, str] = {
    # provenance, on every entity
    "Provenance.sources": "Where the entity's figures come from: URLs or citations, one per item.",
    "Provenance.estimates": "Fields (dotted paths) whose values are estimates, not published figures.",
    "Provenance.notes": "Free text: the reasoning behind estimates and anything a reader should know.",
    "Provenance.ranges": "Field path -> [low, high]: what `sweep --sample`, `sweep --tornado` and `optimize "
    "--futures` draw the field from; a number field's ends are numbers, a month field's (available_from) "
    "months YYYY-MM (drawn in whole months); FIELD.YYYY-MM ranges one entry of a step schedule "
    "(unit_usd.2027-01: the price from then on, the path's other entries kept).",
    # chips
    "ChipSpec.name": "The chip's name as people say it, e.g. Trainium3.",
    "ChipSpec.vendor": "Who makes or sells the chip.",
    "ChipSpec.tdp_w": "Thermal design power of one chip, in watts (W).",
    "ChipSpec.dense_tflops": "Dense peak TFLOPS per chip by precision (fp8 required; bf16, fp32, mxfp4...).",
    "ChipSpec.hbm": "The chip's HBM: generation, stacks, GB per stack, pin rate and bus width.",
    "ChipSpec.scale_up": "The chip's scale-up link: PCIe generation (or lane rate) and lane count.",
    "ChipSpec.scale_out_gbps": "Scale-out network bandwidth per chip, in Gb/s (one direction).",
    "ChipSpec.unit_usd": "Price of one chip, in USD; a number or a schedule {YYYY-MM: USD} (each period's "
    "purchases at the price then; before its first entry, that entry).",
    "ChipSpec.available_from": "First month (YYYY-MM) the chip can be bought; none: always.",
    "ChipSpec.mtbf_hours": "Mean hours between job-interrupting failures, per chip (for goodput).",
    "ChipSpec.life_years": "Years the chip serves, annuitised over them (a life past the window leaves a "
    "residual value); none: the scenario's horizon.",
    "Hbm.generation": "HBM generation, e.g. HBM3E.",
    "Hbm.stacks": "HBM stacks per chip.",
    "Hbm.stack_gb": "Capacity of one HBM stack, in GB.",
    "Hbm.pin_gbps": "Data rate per pin, in Gb/s.",
    "Hbm.bus_bits": "Bus width of one stack, in bits (1024 for HBM3/3E).",
    "ChipScaleUp.protocol": "Scale-up protocol name, e.g. NeuronLink; informational.",
    "ChipScaleUp.pcie_gen": "PCIe generation of the lanes (sets the lane rate: Gen5 32, Gen6 64 Gb/s).",
    "ChipScaleUp.lanes": "Scale-up lanes per chip.",
    "ChipScaleUp.lane_gbps": "Rate per lane and direction, in Gb/s, when not given by pcie_gen.",
    # forms
    "Form.chip": "The chip the form holds (a `chips` id).",
    "Form.names": "Brand, codename and topology names of the design (the Rosetta stone of `show forms`).",
    "Form.topology": "How the scale-up domain is wired: switched or torus.",
    "Form.chips_per_rack": "Chips in one rack.",
    "Form.racks_per_unit": "Racks deployed together as one unit.",
    "Form.domain_chips": "Chips in one scale-up domain; divides chips_per_rack x racks_per_unit.",
    "Form.cooling": "Cooling types the design supports (`cooling` ids).",
    "Form.rack_overhead_kw": "Power of a rack beyond its chips and scale-up switches (hosts, NICs, fans, PSU "
    "losses), in kW.",
    "Form.rack_bom": "Rack kit without chips and switches: line items with quantity and unit price.",
    "Form.scale_up": "Scale-up switch options the design accepts, with switches per rack; [] for a torus.",
    "Form.endpoint_optics_per_chip": "Rack-side scale-out transceivers (or links) per chip.",
    "Form.rack_units": "Height of a rack in U, where it matters; informational.",
    "Form.endpoint_links": "Rack-to-leaf links: optics (transceivers) or copper (DAC/AEC).",
    "Form.copper_usd": "Price of one copper rack-to-leaf link, in USD (endpoint_links: copper).",
    "Form.copper_w": "Power of one copper rack-to-leaf link, in W (endpoint_links: copper).",
    "Form.scale_up_levels": "Switch levels a switched domain's traffic crosses (2: one hop and one switch "
    "latency more).",
    "Form.torus_dims": "A torus domain's dimensions, in chips; multiply to domain_chips; default as cubic "
    "as the domain allows.",
    "Names.brand": "Brand or product name, e.g. Trn3 UltraServer.",
    "Names.codename": "Codename of the design, e.g. Teton3 MAX.",
    "Names.topology": "Topology name, e.g. NL72x2 Switched.",
    "BomItem.item": "What the line is, e.g. compute tray.",
    "BomItem.qty": "How many per rack.",
    "BomItem.unit_usd": "Price of one, in USD.",
    "BomItem.category": "BOM category the line counts under (compute, host, power...).",
    "ScaleUpOption.switch": "A scale-up switch the form accepts (a `switches` id).",
    "ScaleUpOption.per_rack": "Switches of that kind per rack.",
    # switches
    "SwitchSpec.name": "The switch's name as people say it.",
    "SwitchSpec.vendor": "Who makes or sells the switch.",
    "SwitchSpec.role": "scale_up (inside a domain) or scale_out (the network between racks).",
    "SwitchSpec.protocol": "Protocol it speaks, e.g. pcie6, ualink, ethernet.",
    "SwitchSpec.lanes": "Lanes of a scale-up switch.",
    "SwitchSpec.ports": "Ports of a scale-up switch.",
    "SwitchSpec.bandwidth_gbps": "Total switching bandwidth of a scale-out switch, in Gb/s.",
    "SwitchSpec.port_gbps": "Rate of one scale-out port, in Gb/s; bandwidth_gbps / port_gbps is the radix.",
    "SwitchSpec.rack_units": "Height of a scale-out switch, in U (network racks hold 42).",
    "SwitchSpec.power_w": "Power of one switch, in W, optics excluded.",
    "SwitchSpec.unit_usd": "Price of one switch, in USD; a scale-up switch's may be a schedule "
    "{YYYY-MM: USD}.",
    "SwitchSpec.optic_usd": "Price of one optic (transceiver) for its ports, in USD.",
    "SwitchSpec.optic_w": "Power of one optic, in W.",
    "SwitchSpec.available_from": "First month (YYYY-MM) the switch can be bought.",
    "SwitchSpec.latency_ns": "Port-to-port latency, in ns.",
    "SwitchSpec.life_years": "Years the switch and its optics serve, annuitised over them; none: the "
    "scenario's horizon.",
    # cooling
    "Cooling.name": "The cooling type's name as people say it.",
    "Cooling.max_rack_kw": "Most IT power one rack may draw under this cooling, in kW.",
    "Cooling.pue": "Power usage effectiveness: facility power / IT power under this cooling.",
    "Cooling.capex_usd_per_kw": "Fit-out every site pays per IT kW this cooling serves, in USD/kW.",
    "Cooling.plant_usd_per_kw": "Cooling plant per IT kW, in USD/kW; paid only at an owned site.",
    # sites
    "SiteSpec.name": "The site's name as people say it.",
    "SiteSpec.location": "Where the site is; informational.",
    "SiteSpec.it_power_mw": "Critical IT power available, in MW; a number or a schedule {YYYY-MM: MW}.",
    "SiteSpec.grid_power_mw": "Utility limit on IT power x PUE, in MW; a number or a schedule.",
    "SiteSpec.rack_positions": "Rack positions (compute and network racks); a number or a schedule.",
    "SiteSpec.cooling": "Cooling types the site can serve (`cooling` ids).",
    "SiteSpec.cooling_fixed_usd": "Cooling id -> one-off USD to use that cooling at the site at all.",
    "SiteSpec.max_rack_kw": "Floor or busway limit on one rack's IT power, in kW.",
    "SiteSpec.electricity_usd_per_kwh": "Electricity price, in USD per kWh (0.07, not 7 cents nor 70 $/MWh); "
    "a number or a schedule.",
    "SiteSpec.colocation_usd_per_kw_month": "Rent of a leased hall per IT kW and month, in USD; a "
    "number or a schedule; an owned site need not state it (it pays none).",
    "SiteSpec.ownership": "leased (rent pays the hall; colocation is its old name) or owned (the build, "
    "power chain and cooling plant are capex).",
    "SiteSpec.build_usd_per_mw": "Owned site: cost to build the hall per MW of IT used, in USD/MW.",
    "SiteSpec.facility_life_years": "Owned site: years the hall serves, its build annuitised over them; "
    "none: the scenario's horizon.",
    "SiteSpec.redundancy": "The hall's power chain (a `power_chains` id): its usable share of it_power_mw "
    "and, owned, its cost per MW; none: all of it_power_mw is usable.",
    "SiteSpec.cooling_capacity_mw": "Cooling id -> most IT MW (compute and network) that type can cool; a "
    "type left out: bounded by the site's power.",
    "SiteSpec.liquid_premium_usd_per_kw_month": "Leased site: rent per kW cooled by a type other than air "
    "and month, in USD, above the air rent; a number or a schedule.",
    # power chains
    "PowerChain.name": "The redundancy level's name as people say it, e.g. N+1.",
    "PowerChain.usable_share": "Share of a hall's it_power_mw usable under this chain, a fraction "
    "(0.5 for 2N).",
    "PowerChain.usd_per_mw": "Cost of the chain (generators, UPS, transformers) per MW of IT, in USD/MW; "
    "paid at an owned site.",
    # scenarios
    "ScenarioSpec.description": "What the scenario asks, in one line.",
    "ScenarioSpec.sites": "Sites the plan may use (`sites` ids).",
    "ScenarioSpec.chips": "Chips the plan may use (`chips` ids); default all.",
    "ScenarioSpec.forms": "Forms the plan may use (`forms` ids); default all.",
    "ScenarioSpec.demand": "What the plan must hold: any of chips, fp8_pflops, hbm_tb, effective_fp8_pflops "
    "(all given must hold); with periods, by month or a ramp.",
    "ScenarioSpec.min_domain_chips": "Smallest scale-up domain allowed, in chips.",
    "ScenarioSpec.as_of": "Month (YYYY-MM) the plan is made for: what is available and which schedule "
    "entries hold; not with periods.",
    "ScenarioSpec.periods": "Start months (YYYY-MM, increasing) of a phased plan's periods.",
    "ScenarioSpec.supply": "Chip or switch id -> most units the plan may buy.",
    "ScenarioSpec.objective": "min_tco, max_perf_per_tco, or max_perf (needs a budget).",
    "ScenarioSpec.budget": "Limits on capex and TCO, in USD.",
    "ScenarioSpec.horizon_years": "Years the TCO covers (the window, from the first period's start).",
    "ScenarioSpec.cost_of_capital": "Yearly cost of capital, a fraction (0.08 for 8%).",
    "ScenarioSpec.utilization": "Average power draw / peak, a fraction, for energy.",
    "ScenarioSpec.maintenance_rate": "Maintenance per year, a fraction of capex (0.03 for 3%).",
    "ScenarioSpec.fabric": "The scale-out network: its cooling, oversubscription, network rack kit.",
    "ScenarioSpec.decide": "Last period start (YYYY-MM) whose purchases every future shares "
    "(`optimize --futures`); default the first period.",
    "ScenarioSpec.workload": "A `workloads` id: the share of peak each form delivers; none: all of it.",
    "ScenarioSpec.gap": "Relative gap the plan is proven within, a fraction (0.0001 for 0.01%); 0, the "
    "default: proven optimal. `optimize --gap` overrides it.",
    "Demand.chips": "Chips needed, installed.",
    "Demand.fp8_pflops": "Dense FP8 PFLOPS needed, installed.",
    "Demand.hbm_tb": "HBM capacity needed, in TB.",
    "Demand.effective_fp8_pflops": "FP8 PFLOPS delivered under the scenario's workload, needed.",
    "Demand.at_most": "The most the plan may hold: chips, fp8_pflops, hbm_tb.",
    "DemandCap.chips": "Most chips the plan may hold.",
    "DemandCap.fp8_pflops": "Most dense FP8 PFLOPS the plan may hold.",
    "DemandCap.hbm_tb": "Most HBM the plan may hold, in TB.",
    "DemandRamp.start": "Period start (YYYY-MM) where the ramp begins (written `from`).",
    "DemandRamp.to": "Period start (YYYY-MM) where the ramp ends; later periods keep its end figures.",
    "DemandRamp.step": "How the figures move between from and to: linear (rounded up per period).",
    "DemandRamp.chips": "[chips at from, chips at to].",
    "DemandRamp.fp8_pflops": "[FP8 PFLOPS at from, at to].",
    "DemandRamp.hbm_tb": "[HBM TB at from, at to].",
    "DemandRamp.effective_fp8_pflops": "[delivered FP8 PFLOPS at from, at to].",
    "Budget.capex_usd": "Most capex the plan may spend, in USD.",
    "Budget.tco_usd": "Most TCO the plan may cost over the horizon, in USD.",
    "Fabric.cooling": "Cooling type (`cooling` id) of the scale-out network gear.",
    "Fabric.oversubscription": "Down:up port ratio of the first tier (1: non-blocking).",
    "Fabric.rack_usd": "Kit of one network rack (rack, PDUs, trays), in USD.",
    # workloads
    "Workload.name": "The workload's name as people say it.",
    "Workload.description": "What the workload is, in one line.",
    "Workload.efficiency": "Rules: the share of dense FP8 peak delivered; the first matching rule wins.",
    "Workload.job": "The job the workload runs, from which trnplan computes each form's efficiency.",
    "Job.kind": "train or serve.",
    "Job.total_params_b": "All parameters, in billions.",
    "Job.active_params_b": "Parameters each token passes through, in billions (= total for dense).",
    "Job.layers": "Transformer layers.",
    "Job.hidden": "Hidden size (model width).",
    "Job.experts": "Routed experts per MoE layer; 0: dense.",
    "Job.experts_per_token": "Experts each token is routed to.",
    "Job.seq_len": "Sequence length, in tokens.",
    "Job.global_batch_tokens": "Train: tokens per optimizer step.",
    "Job.precision": "The peak its matrix units run at: fp8 or bf16.",
    "Job.job_chips": "Chips one job spans (data-parallel width, failure exposure).",
    "Job.heads": "Attention heads.",
    "Job.flash_attention": "Attention scores never stored nor re-read (false: as Megatron 2022).",
    "Job.kv_cache_kb_per_token": "Serve: KV cache per token, in KB.",
    "Job.prompt_tokens": "Serve: prompt tokens per request.",
    "Job.output_tokens": "Serve: output tokens per request.",
    "Job.batch": "Serve: concurrent sequences per replica.",
    "Job.layout": "A parallel layout pinned by the job (a published run's); absent: searched.",
    "JobLayout.tp": "Tensor-parallel width, in chips.",
    "JobLayout.ep": "Expert-parallel width, in chips.",
    "JobLayout.pp": "Pipeline stages.",
    "JobLayout.dp": "Data-parallel replicas.",
    "JobLayout.cp": "Context-parallel width, in chips.",
    "JobLayout.interleave": "Virtual pipeline stages per chip.",
    "JobLayout.micro_batch": "Sequences per micro-batch.",
    "EfficiencyRule.topology": "The rule matches forms of this topology (switched or torus).",
    "EfficiencyRule.min_domain_chips": "Matches forms whose scale-up domain holds at least this many chips.",
    "EfficiencyRule.forms": "The rule matches these forms (`forms` ids).",
    "EfficiencyRule.value": "Share of dense FP8 peak delivered (MFU x goodput), a fraction.",
}


def field_doc(model: type[Any], name: str) -> str | None:
    """The description of field `name` of `model` (or of the base model that declares it); None if none."""
    for cls in model.__mro__:
        doc = FIELD_DOCS.get(f"{cls.__name__}.{name}")
        if doc is not None:
            return doc
    return None
