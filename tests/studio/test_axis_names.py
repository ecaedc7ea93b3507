"""Class names on a dual-taxonomy matrix's axes (tore_engine.studio.axis_names): a long layout
name cut to what tells it from the other side's, the label whole, the full names kept whenever two
would look alike."""

from __future__ import annotations

from tests.helpers import small_layout
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio.axis_names import axis_names


def test_long_dual_prefixes_are_cut_on_the_axes_and_never_merge_two_classes():

    boxes = [{"label": "Text", "bbox": [0, 0, 5, 5]}]
    reference = small_layout("gt", [("p", boxes)])
    evaluation = evaluate_dataset(reference, small_layout("detection_prediction", [("p", [{**boxes[0], "label": "table"}])]))
    assert evaluation.classes == ["Background", "gt_Text", "detection_prediction_table"]
    assert axis_names(evaluation) == {"detection_prediction_table": "detecti…ediction_table"}  # the label whole
    twins = evaluate_dataset(small_layout("checkpoint_0001_final_eval", [("p", boxes)]), small_layout("checkpoint_0002_final_eval", [("p", boxes)]),
                             taxonomy="dual")
    assert twins.classes[1:] == ["checkpoint_0001_final_eval_Text", "checkpoint_0002_final_eval_Text"]
    # what tells the two apart: their shared words at either end left out
    assert axis_names(twins) == {"checkpoint_0001_final_eval_Text": "…0001…_Text", "checkpoint_0002_final_eval_Text": "…0002…_Text"}
    family = evaluate_dataset(small_layout("coco_results_pre_heron_default_layout_model", [("p", boxes)]),
                              small_layout("coco_results_heron_layout_model", [("p", boxes)]), taxonomy="dual")
    assert axis_names(family) == {"coco_results_pre_heron_default_layout_model_Text": "…pre_heron_default…_Text",
                                  "coco_results_heron_layout_model_Text": "…heron…_Text"}
    same = evaluate_dataset(small_layout("checkpoint_0001_final_eval", [("p", boxes)]), small_layout("checkpoint_0001_final_eval_", [("p", boxes)]),
                            taxonomy="dual")
    assert same.classes[1:] == ["checkpoint_0001_final_eval_Text", "checkpoint_0001_final_eval__Text"]
    assert axis_names(same) == {}  # their words are the same, only a separator differs: the full names stay
    nested = evaluate_dataset(small_layout("coco_results_model", [("p", boxes)]), small_layout("coco_results_model_v2", [("p", boxes)]),
                              taxonomy="dual")
    assert axis_names(nested) == {"coco_results_model_v2_Text": "…v2_Text"}  # the shorter one is all shared: whole
    single = evaluate_dataset(reference, reference)
    assert single.matrices.mode == "single" and axis_names(single) == {}
