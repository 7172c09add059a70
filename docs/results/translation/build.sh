#!/bin/bash
# build.sh GAME CART TYPE GAMETYPE SIZE: trace, generate, build base and translated drivers
set -e
g=$1; cart=$2; type=$3; gt=$4; size=$5
cd ${PROTO:-/tmp/proto}; mkdir -p $g; python mkcfg.py $g 16 200 >/dev/null; mv $g.cfg $g/
rm -rf $g/cpp; cp -r cpp $g/cpp
F="-std=c++17 -O3 -g1 -I$(python -c "import cule.benchmarks, os; print(os.path.dirname(cule.benchmarks.__file__))") -I${PROTO:-/tmp/proto}/$g/cpp -DCULE_SIMT_CART_TYPE=cule::CartType::k$cart -DCULE_SIMT_GAME=$gt -DPROTO_ONLY_CART=k$cart -DPROTO_ONLY_TYPE=$type -DPROTO_SIZE=$size"
g++ $F -DPROTO_TRACE driver.cpp -o $g/drv_trace
(cd $g && ./drv_trace $g.cfg 16 2000 && mv pcs.txt pcs16.txt)
cat $g/pcs16.txt | sort -n | uniq > $g/pcs_all.txt
python gen.py $(python -c "import cule;print(cule.load_rom('$g').path)") $g/pcs_all.txt $g/cpp/console
g++ $F driver.cpp -o $g/drv_base
g++ $F -DPROTO_TR -DPROTO_CHECKED driver.cpp -o $g/drv_trc
g++ $F -DPROTO_TR driver.cpp -o $g/drv_tr
echo built $g
